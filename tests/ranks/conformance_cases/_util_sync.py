"""Cases for mpi4py.util.sync with the window class replaced, and DOCUMENTED (its documented results)."""

from __future__ import annotations

import time
import types
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from ._support import SPIN_DEADLINE, Raised, attempt, case, gathered_sorted, keep, norm


# -- mpi4py.util.sync with the window class replaced ------------------------------------------------


class _MPIWithWin(types.ModuleType):
    """mpi4py.MPI with ``Win`` replaced: what util.sync sees as ``MPI``."""

    def __init__(self, MPI: Any, Win: Any) -> None:
        super().__init__("mpi4py.MPI")
        self._mpi = MPI
        self.Win = Win

    def __getattr__(self, name: str) -> Any:
        return getattr(self._mpi, name)


def _bounded_backoff(original: Callable[..., Any]) -> Callable[..., Any]:
    """util.sync's backoff (it sleeps between polls, as mpi4py does), raising
    TimeoutError once a spin-wait lasts SPIN_DEADLINE seconds."""
    def new_backoff(*args: Any, **kwargs: Any) -> Callable[[], None]:
        step = original(*args, **kwargs)
        deadline = time.monotonic() + SPIN_DEADLINE

        def backoff() -> None:
            if time.monotonic() > deadline:
                raise TimeoutError("util.sync spin-wait exceeded the conformance deadline")
            step()

        return backoff

    return new_backoff


@contextmanager
def sync_module(MPI: Any, Win: Any) -> Iterator[tuple[Any, Any]]:
    """(mpi4py.util.sync creating its windows with Win, the info to give it).

    util.sync sees ``MPI.Win`` replaced by Win and nothing else changed
    (mpi4py's own module when Win is MPI.Win); info is MPI.INFO_NULL, util.sync's
    default. Spin-waits are bounded (TimeoutError)."""
    from mpi4py.util import sync

    saved = (sync.MPI, sync._new_backoff)
    if Win is not MPI.Win:
        sync.MPI = _MPIWithWin(MPI, Win)
    sync._new_backoff = _bounded_backoff(saved[1])
    try:
        yield sync, MPI.INFO_NULL
    finally:
        sync.MPI, sync._new_backoff = saved


@case
def sync_counter_next(Win, MPI, comm, np):
    """Counter: next() and iteration give every value exactly once across ranks."""
    with sync_module(MPI, Win) as (sync, info):
        counter = sync.Counter(comm=comm, info=info)
        try:
            values = [counter.next(), next(counter), counter.next()]
        finally:
            counter.free()
    return gathered_sorted(comm, values)


@case
def sync_counter_start_step_incr(Win, MPI, comm, np):
    with sync_module(MPI, Win) as (sync, info):
        counter = sync.Counter(10, 5, comm=comm, info=info)
        try:
            steps = gathered_sorted(comm, [counter.next()])
            incrs = gathered_sorted(comm, [counter.next(2)])
            final = counter.next(0)
        finally:
            counter.free()
    return steps, incrs, final


@case
def sync_counter_root1_int64(Win, MPI, comm, np):
    with sync_module(MPI, Win) as (sync, info):
        counter = sync.Counter(typecode="l", root=1, comm=comm, info=info)
        try:
            values = [counter.next() for _ in range(3)]
        finally:
            counter.free()
    return gathered_sorted(comm, values)


@case
def sync_counter_next_after_free(Win, MPI, comm, np):
    with sync_module(MPI, Win) as (sync, info):
        counter = sync.Counter(comm=comm, info=info)
        counter.free()
        return attempt(counter.next)


# Mutex, Condition and Semaphore are compared with their documented results,
# not with MPI.Win: on this machine's MPICH 4.0.2 (ch4:ucx), util.sync's Mutex
# on MPI.Win is broken, also with the hints disable_shm_accumulate=true or
# alloc_shm=false. A rank's own lock flag reads 1 although nothing set it
# ("cannot acquire already held mutex" on a first acquire(blocking=False)
# while the other rank holds the mutex), contended handovers lose updates,
# some runs hang, and the windows left behind make MPI_Finalize abort. Counter
# works there and is compared with MPI.Win above. These cases return the same
# value on every rank (gathered), which DOCUMENTED gives.


def _raised(builtin: str, message: str) -> Raised:
    return Raised(builtin, builtin, False, False, message)


DOCUMENTED: dict[str, Any] = {}
"""Case name -> the result mpi4py documents, used instead of an MPI.Win run
(see above). Every rank's result must equal it."""

_T, _F = True, False


def documented(value: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        DOCUMENTED[fn.__name__] = norm(value)
        return case(fn)

    return register


@documented(([[_T, _F, _T, _F, _T, _F], [_T, _F, _T, _F, _T, _F]], 6))
def sync_mutex_contended(Win, MPI, comm, np):
    """Both ranks contend for a Mutex protecting a read-modify-write made of
    Get and Put (not atomic): 3 increments per rank give 6."""
    rank = comm.Get_rank()
    with sync_module(MPI, Win) as (sync, info):
        mutex = sync.Mutex(comm=comm, info=info)
        data = Win.Allocate(4 if rank == 0 else 0, 4, MPI.INFO_NULL, comm)
        try:
            def increments():
                held = []
                for _ in range(3):
                    mutex.acquire()
                    held.append(mutex.locked())
                    value = np.zeros(1, "i")
                    data.Lock(0, MPI.LOCK_SHARED)
                    data.Get(value, 0, 0)
                    data.Unlock(0)
                    data.Lock(0, MPI.LOCK_SHARED)
                    data.Put(keep(value + 1), 0, 0)
                    data.Unlock(0)
                    mutex.release()
                    held.append(mutex.locked())
                return held

            held = attempt(increments)
            comm.Barrier()
            total = np.zeros(1, "i")
            data.Lock(0, MPI.LOCK_SHARED)
            data.Get(total, 0, 0)
            data.Unlock(0)
            comm.Barrier()
        finally:
            try:
                data.Free()
            finally:
                mutex.free()
    return comm.allgather(held), int(total[0])


@documented([(_T, _F), (_T, _F)])
def sync_mutex_context_manager(Win, MPI, comm, np):
    """``with mutex:`` holds it inside, releases it after (ranks in turn)."""
    rank = comm.Get_rank()
    with sync_module(MPI, Win) as (sync, info):
        mutex = sync.Mutex(comm=comm, info=info)
        try:
            def body():
                with mutex:
                    inside = mutex.locked()
                return inside, mutex.locked()

            result = None
            for turn in range(2):
                if turn == rank:
                    result = attempt(body)
                comm.Barrier()
        finally:
            mutex.free()
    return comm.allgather(result)


@documented([[_T, None], [_F, _T, None]])
def sync_mutex_nonblocking(Win, MPI, comm, np):
    """acquire(blocking=False) is False while the other rank holds the
    mutex, True once it released it."""
    rank = comm.Get_rank()
    with sync_module(MPI, Win) as (sync, info):
        mutex = sync.Mutex(comm=comm, info=info)
        try:
            got = []
            if rank == 0:
                got.append(attempt(mutex.acquire))
            comm.Barrier()
            if rank == 1:
                got.append(attempt(mutex.acquire, blocking=False))
            comm.Barrier()
            if rank == 0:
                got.append(attempt(mutex.release))
            comm.Barrier()
            if rank == 1:
                got.append(attempt(mutex.acquire, blocking=False))
                got.append(attempt(mutex.release))
            comm.Barrier()
        finally:
            mutex.free()
    return comm.allgather(got)


@documented([(2, _T, _F), (2, _T, _F)])
def sync_mutex_recursive(Win, MPI, comm, np):
    """A recursive Mutex counts its acquisitions (ranks in turn)."""
    rank = comm.Get_rank()
    with sync_module(MPI, Win) as (sync, info):
        mutex = sync.Mutex(recursive=True, comm=comm, info=info)
        try:
            def body():
                mutex.acquire()
                mutex.acquire()
                count = mutex.count()
                mutex.release()
                still = mutex.locked()
                mutex.release()
                return count, still, mutex.locked()

            result = None
            for turn in range(2):
                if turn == rank:
                    result = attempt(body)
                comm.Barrier()
        finally:
            mutex.free()
    return comm.allgather(result)


_MISUSE = (_raised("RuntimeError", "cannot release unheld mutex"),
           _raised("RuntimeError", "cannot acquire already held mutex"))


@documented([_MISUSE, _MISUSE])
def sync_mutex_misuse(Win, MPI, comm, np):
    """Releasing an unheld mutex and re-acquiring a held one: RuntimeError."""
    rank = comm.Get_rank()
    with sync_module(MPI, Win) as (sync, info):
        mutex = sync.Mutex(comm=comm, info=info)
        try:
            def body():
                r1 = attempt(mutex.release)
                mutex.acquire()
                r2 = attempt(mutex.acquire)
                mutex.release()
                return r1, r2

            result = None
            for turn in range(2):
                if turn == rank:
                    result = attempt(body)
                comm.Barrier()
        finally:
            mutex.free()
    return comm.allgather(result)


@documented([("notified", "int"), ("waited", _T)])
def sync_condition_notify(Win, MPI, comm, np):
    """Rank 1 waits (Condition.wait_for) for a Counter to become positive;
    rank 0 increments it and notifies, under the condition's mutex."""
    rank = comm.Get_rank()
    with sync_module(MPI, Win) as (sync, info):
        counter = sync.Counter(comm=comm, info=info)
        cv = sync.Condition(comm=comm, info=info)
        try:
            def notifier():
                with cv:
                    counter.next()
                    woken = cv.notify_all()
                return ("notified", type(woken).__name__)

            def waiter():
                with cv:
                    return ("waited", cv.wait_for(lambda: counter.next(0) > 0))

            result = attempt(notifier if rank == 0 else waiter)
            comm.Barrier()
        finally:
            try:
                cv.free()
            finally:
                counter.free()
    return comm.allgather(result)


@documented([[[_T, _T], _T, None, _raised("ValueError", "semaphore released too many times")], [[_T, _T], _F]])
def sync_semaphore(Win, MPI, comm, np):
    """Semaphore(1): each rank acquires and releases twice (contended); a
    non-blocking acquire fails while the other rank holds it; releasing past
    the bound raises ValueError."""
    rank = comm.Get_rank()
    with sync_module(MPI, Win) as (sync, info):
        sem = sync.Semaphore(1, comm=comm, info=info)
        try:
            def turns():
                got = []
                for _ in range(2):
                    got.append(sem.acquire())
                    sem.release()
                return got

            results = [attempt(turns)]
            comm.Barrier()
            if rank == 0:
                results.append(attempt(sem.acquire))
            comm.Barrier()
            if rank == 1:
                results.append(attempt(sem.acquire, blocking=False))
            comm.Barrier()
            if rank == 0:
                results.append(attempt(sem.release))
                results.append(attempt(sem.release))
            comm.Barrier()
        finally:
            sem.free()
    return comm.allgather(results)
