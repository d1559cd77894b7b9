"""mpi4py.util.sync (Counter, Mutex, Condition, Semaphore) over onesided
windows, under mpiexec (mpi4py's COMM_WORLD) or onesided's launcher
(onesided.COMM_WORLD): util.sync sees ``MPI.Win`` replaced by
``onesided.Window`` and nothing else changed. Every rank prints
``PASS sync`` at the end.

Usage: sync.py [ROUNDS]   (blocking acquires per rank in the Mutex test)
"""

from __future__ import annotations

import sys
import types
from typing import Any

import numpy as np
from mpi4py import MPI
from mpi4py.util import sync

import harness
import onesided


class MPIWithWindow(types.ModuleType):
    """mpi4py.MPI as util.sync sees it: Win is onesided.Window."""

    def __init__(self) -> None:
        super().__init__("mpi4py.MPI")
        self.Win = onesided.Window

    def __getattr__(self, name: str) -> Any:
        return getattr(MPI, name)


sync.MPI = MPIWithWindow()  # type: ignore[assignment]
comm = harness.comm()
rank, size = comm.Get_rank(), comm.Get_size()
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20


def counter() -> None:
    c = sync.Counter(comm=comm)
    mine = [c.next() for _ in range(rounds)]
    everyone = sorted(v for part in comm.allgather(mine) for v in part)
    assert everyone == list(range(rounds * size)), everyone
    c.free()
    c.free()  # a second free is a no-op (onesided.Window.free)
    try:
        c.next()
    except RuntimeError:
        pass
    else:
        raise AssertionError("next() after free() did not raise")


def mutex() -> None:
    """Blocking acquires from every rank protect a non-atomic Get + Put
    increment on rank 0: no update is lost."""
    m = sync.Mutex(comm=comm)
    data = onesided.Window.Allocate(8 if rank == 0 else 0, 8, comm=comm)
    value = np.zeros(1, np.int64)
    for _ in range(rounds):
        with m:
            assert m.locked()
            data.Lock(0, onesided.LOCK_SHARED)
            data.Get(value, 0, 0)
            data.Unlock(0)
            value += 1
            data.Lock(0, onesided.LOCK_SHARED)
            data.Put(value, 0, 0)
            data.Unlock(0)
        assert not m.locked()
    comm.Barrier()
    data.Lock(0, onesided.LOCK_SHARED)
    data.Get(value, 0, 0)
    data.Unlock(0)
    assert value[0] == rounds * size, (value[0], rounds * size)
    comm.Barrier()
    data.Free()
    m.free()


def condition() -> None:
    """Every rank but 0 waits until rank 0 has bumped a counter and notified."""
    c = sync.Counter(comm=comm)
    cv = sync.Condition(comm=comm)
    if rank == 0:
        with cv:
            c.next()
            cv.notify_all()
    else:
        with cv:
            assert cv.wait_for(lambda: c.next(0) > 0)
    comm.Barrier()
    cv.free()
    c.free()


def semaphore() -> None:
    """A Semaphore(1) as a lock, contended by every rank."""
    s = sync.Semaphore(1, comm=comm)
    for _ in range(max(1, rounds // 4)):
        s.acquire()
        s.release()
    comm.Barrier()
    if rank == 0:
        assert s.acquire(blocking=False)
        s.release()
    comm.Barrier()
    s.free()


for test in (counter, mutex, condition, semaphore):
    test()
    comm.Barrier()
print(f"PASS sync rank {rank}", flush=True)
