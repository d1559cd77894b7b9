"""The race checker on RMARaceBench's MPIRMA cases (folders atomic, conflict
and sync), rewritten in Python: every case whose race is between two RMA
calls, with and without the race, and every case whose race is a store
into an origin buffer before its call completed. Cases whose race is with
a plain load or store of window memory, or with a result buffer, are out
of the checker's reach (docs/checking.md lists them).

Usage (from tests/test_races.py): <launcher> -n N races.py [--create] [CASE ...]
on 2 or 3 ranks (--create: Window.Create over numpy memory, which takes
the cross-memory path on one host, instead of Window.Allocate). Rank 1 is the target; the origins are ranks 0 and 2 (on
2 ranks: 0 and 1, the target accessing its own window by RMA). Each case
runs on a fresh window with onesided_check=races; every rank records the
RaceWarnings it gets, and rank 0 prints one line per case:
"case NAME race=0|1 reach=0|1 found=0|1 checked=0|1" (reach: the race is
one the checker can see on this path, see LOCAL; found: some rank was
warned; checked: the window really took the checking path).
"""

from __future__ import annotations

import sys
import warnings
from typing import Callable

import numpy as np

import harness
import onesided
from onesided import Window

comm = harness.comm()
rank, size = comm.Get_rank(), comm.Get_size()
T, A = 1, 0
B = 2 if size >= 3 else 1
INFO = harness.info(onesided_check="races")

I32, I16, I64, F32, F64 = np.int32, np.int16, np.int64, np.float32, np.float64


def val(dtype: type = I32, n: int = 1) -> np.ndarray:
    return np.ones(n, dtype)


def acc(win: Window, dtype: type = I32, at: int = 0, n: int = 1) -> None:
    """Accumulate SUM of n elements of dtype at byte `at` of T's window."""
    win.Accumulate(val(dtype, n), T, (at, n, dtype), onesided.SUM)


def gacc_read(win: Window, dtype: type = I32, at: int = 0) -> None:
    win.Get_accumulate(val(dtype), np.zeros(1, dtype), T, (at, 1, dtype), onesided.NO_OP)


def fenced(a: Callable[[Window], None] | None, b: Callable[[Window], None] | None) -> Callable[[Window], None]:
    """A's call at rank A and B's at rank B, in one fence epoch."""

    def run(win: Window) -> None:
        win.Fence()
        if rank == A and a:
            a(win)
        if rank == B and b:
            b(win)
        win.Fence()

    return run


def same_origin(*calls: Callable[[Window], None]) -> Callable[[Window], None]:
    """Every call at rank A, in order, in one fence epoch."""

    def run(win: Window) -> None:
        win.Fence()
        if rank == A:
            for c in calls:
                c(win)
        win.Fence()

    return run


put = lambda at=0: lambda w: w.Put(val(), T, at)  # noqa: E731
get = lambda at=0: lambda w: w.Get(np.zeros(1, I32), T, at)  # noqa: E731


# ---- sync: the cases whose point is the synchronisation ---------------------

def fence_3procs_no(win: Window) -> None:
    """A's put and B's put in consecutive fence epochs: the fence orders them."""
    win.Fence()
    if rank == A:
        win.Put(val(), T, 0)
    win.Fence()
    if rank == B:
        win.Put(val(), T, 0)
    win.Fence()


def pscw(one_epoch: bool) -> Callable[[Window], None]:
    """A and B put to T's element 0 in T's exposure epoch (one_epoch), or A
    in a first and B in a second: Wait orders them."""

    def access(win: Window, who: int) -> None:
        if rank == who:
            win.Start([T])
            win.Put(val(), T, 0)
            win.Complete()

    def run(win: Window) -> None:
        origins = sorted({A, B})
        if one_epoch:
            if rank == T:
                win.Post(origins)
            access(win, A)
            if B != A:
                access(win, B)
            if rank == T:
                win.Wait()
            return
        for who in (A, B):
            if rank == T:
                win.Post([who])
            access(win, who)
            if rank == T:
                win.Wait()
            comm.Barrier()

    return run


def locked(kind: int, barrier_inside: bool) -> Callable[[Window], None]:
    """A and B each lock T and put to element 0. Shared locks with a barrier
    inside both epochs: both puts are in flight together, a race.
    Exclusive locks: the lock orders them, no race."""

    def run(win: Window) -> None:
        if rank in (A, B):
            win.Lock(T, kind)
            win.Put(val(), T, 0)
        if barrier_inside:
            comm.Barrier()
        if rank in (A, B):
            win.Unlock(T)
        comm.Barrier()

    return run


def shared_then_barrier_no(win: Window) -> None:
    """A's shared epoch ends, a barrier, then B's: ordered by the barrier."""
    if rank == A:
        with win.lock(T, onesided.LOCK_SHARED):
            win.Put(val(), T, 0)
    comm.Barrier()
    if rank == B:
        with win.lock(T, onesided.LOCK_SHARED):
            win.Put(val(), T, 0)
    comm.Barrier()


def lockall_flushall(flush: bool) -> Callable[[Window], None]:
    """In one Lock_all epoch: A puts, (flushes,) barrier, B gets the same
    element, barrier. Without the flush the put may still be in flight."""

    def run(win: Window) -> None:
        win.Lock_all()
        if rank == A:
            win.Put(val(), T, 0)
            if flush:
                win.Flush_all()
        comm.Barrier()
        if rank == B:
            win.Get(np.zeros(1, I32), T, 0)
        comm.Barrier()
        win.Unlock_all()

    return run


def lock_same_origin(between: str) -> Callable[[Window], None]:
    """A puts then gets T's element 0 in one shared epoch; between them
    nothing, a Flush (orders them) or a Flush_local (does not)."""

    def run(win: Window) -> None:
        if rank == A:
            win.Lock(T, onesided.LOCK_SHARED)
            win.Put(val(), T, 0)
            if between == "flush":
                win.Flush(T)
            elif between == "flush_local":
                win.Flush_local(T)
            win.Get(np.zeros(1, I32), T, 0)
            win.Unlock(T)
        comm.Barrier()

    return run


def request_then_put(call: str, wait_first: bool, epoch: str = "fence") -> Callable[[Window], None]:
    """Rank A's request-based call on T's element 0 (Rget, Rput, or
    Rget_accumulate with NO_OP or SUM), then its Put to the same element,
    with the request's Wait before the Put (wait_first) or after it. Only a
    read that Wait saw complete is done at the target (MPI 4.1 12.3.5): Rput
    and a writing Rget_accumulate complete locally at their Wait, so the
    Put still races with them until a flush. `epoch`: one fence epoch, or a
    shared lock of T (whose Wait is a Test loop)."""

    def issue(win: Window) -> onesided.Request:
        if call == "rget":
            return win.Rget(np.zeros(1, I32), T, 0)
        if call == "rput":
            return win.Rput(val(), T, 0)
        op = onesided.NO_OP if call == "rgetacc-noop" else onesided.SUM
        return win.Rget_accumulate(val(), np.zeros(1, I32), T, 0, op)

    def complete(req: onesided.Request) -> None:
        if epoch == "fence":
            req.Wait()
        else:
            while not req.Test():
                pass

    def run(win: Window) -> None:
        if epoch == "fence":
            win.Fence()
        if rank == A:
            if epoch == "lock":
                win.Lock(T, onesided.LOCK_SHARED)
            req = issue(win)
            if wait_first:
                complete(req)
            win.Put(val(), T, 0)
            if not wait_first:
                complete(req)
            if epoch == "lock":
                win.Unlock(T)
        if epoch == "fence":
            win.Fence()
        comm.Barrier()

    return run


def rget_wait_barrier_put_no(win: Window) -> None:
    """In one Lock_all epoch: A's Rget of T's element 0 and its Wait, a
    barrier, then B's Put there. The read was done when Wait returned,
    before the barrier; B's Put came after it."""
    win.Lock_all()
    if rank == A:
        win.Rget(np.zeros(1, I32), T, 0).Wait()
    comm.Barrier()
    if rank == B:
        win.Put(val(), T, 0)
    comm.Barrier()
    win.Unlock_all()


def strided(b: Callable[[Window], None]) -> Callable[[Window], None]:
    """A accumulates into elements 0, 2, 4 through a strided target layout;
    B's call in the same fence epoch."""

    def a(win: Window) -> None:
        win.Accumulate(val(I32, 3), T, (0, 1, onesided.Layout(3, (2,), dtype=I32)), onesided.SUM)

    return fenced(a, b)


# ---- origin buffers changed before completion (the "local" cases) ----------

def origin_buffer(open_epoch: Callable[[Window], None], close_epoch: Callable[[Window], None],
                  call: str, changes: bool, between: Callable[[Window], None] | None = None,
                  after_close: bool = False) -> Callable[[Window], None]:
    """Rank A puts (or accumulates) from `buf` to T, then stores into `buf`
    (changes) or only reads it, before the epoch ends: right after the
    call, or after `between` completed it; or (after_close) once the
    epoch has ended."""
    buf = np.array([7], I32)

    def change() -> None:
        if changes:
            buf[0] = 42
        else:
            assert buf[0] == 7

    def run(win: Window) -> None:
        buf[0] = 7
        open_epoch(win)
        if rank == A:
            if call == "put":
                win.Put(buf, T, 0)
            else:
                win.Accumulate(buf, T, 0, onesided.SUM)
            if between:
                between(win)
            if not after_close:
                change()
        close_epoch(win)
        if rank == A and after_close:
            change()

    return run


def fence_open(win: Window) -> None:
    win.Fence()


def lock_open(win: Window) -> None:
    if rank == A:
        win.Lock(T, onesided.LOCK_SHARED)


def lock_close(win: Window) -> None:
    if rank == A:
        win.Unlock(T)
    comm.Barrier()


def lockall_open(win: Window) -> None:
    win.Lock_all()


def lockall_close(win: Window) -> None:
    win.Unlock_all()


def pscw_open(win: Window) -> None:
    if rank == T:
        win.Post([A])
    if rank == A:
        win.Start([T])


def pscw_close(win: Window) -> None:
    if rank == A:
        win.Complete()
    if rank == T:
        win.Wait()


# Races with the origin buffer, found only where calls do not complete in
# place (not on the shared-memory and cross-memory paths, IN_PLACE): there
# the checker sees the change.
IN_PLACE = {"checking(shared-memory)", "checking(cross-memory)"}
LOCAL = {"conflict-put-store-local-yes", "conflict-acc-store-local-yes", "sync-fence-local-yes",
         "sync-lock-local-yes", "sync-lock-flush-local-yes", "sync-lockall-flushlocalall-local-yes",
         "sync-pscw-local-yes"}

# name -> (race?, program). Names follow RMARaceBench's files.
CASES: dict[str, tuple[bool, Callable[[Window], None]]] = {
    # atomic/
    "atomic-customdatatype-no": (False, strided(lambda w: w.Put(val(), T, 4))),
    "atomic-customdatatype-yes": (True, strided(lambda w: w.Put(val(), T, 8))),
    "atomic-disp-yes": (True, fenced(lambda w: acc(w, I32, 8, 4), lambda w: acc(w, I64, 16))),
    "atomic-disp-no": (False, fenced(lambda w: acc(w, I32, 0, 4), lambda w: acc(w, I32, 8, 4))),
    "atomic-short-int-yes": (True, fenced(lambda w: acc(w, I16), lambda w: acc(w, I32))),
    "atomic-float-int-yes": (True, fenced(lambda w: acc(w, F32), lambda w: acc(w, I32))),
    "atomic-float-int-sameorigin-yes": (True, same_origin(lambda w: acc(w, F32), lambda w: acc(w, I32))),
    "atomic-double-float-yes": (True, fenced(lambda w: acc(w, F64), lambda w: acc(w, F32, 4))),
    "atomic-int-int-no": (False, fenced(lambda w: acc(w), lambda w: acc(w))),
    "atomic-int-int-sameorigin-no": (False, same_origin(lambda w: acc(w), lambda w: acc(w))),
    # conflict/ (RMA against RMA)
    "conflict-put-put-local-no": (False, same_origin(put(0), put(4))),
    "conflict-get-get-remote-no": (False, fenced(get(), get())),
    "conflict-get-put-remote-yes": (True, fenced(get(), put())),
    "conflict-get-gaccread-remote-no": (False, fenced(get(), gacc_read)),
    "conflict-get-acc-remote-yes": (True, fenced(get(), acc)),
    "conflict-put-put-remote-yes": (True, fenced(put(), put())),
    "conflict-put-gaccread-remote-yes": (True, fenced(put(), gacc_read)),
    "conflict-put-acc-remote-yes": (True, fenced(put(), acc)),
    "conflict-acc-acc-remote-no": (False, fenced(acc, acc)),
    "conflict-acc-gaccread-remote-no": (False, fenced(acc, gacc_read)),
    "conflict-gaccread-gaccread-remote-no": (False, fenced(gacc_read, gacc_read)),
    "conflict-gacc-gacc-remote-no": (False, fenced(
        lambda w: w.Get_accumulate(val(), np.zeros(1, I32), T, 0, onesided.SUM),
        lambda w: w.Get_accumulate(val(), np.zeros(1, I32), T, 0, onesided.SUM))),
    "conflict-fop-fop-remote-no": (False, fenced(
        lambda w: w.Fetch_and_op(val(), np.zeros(1, I32), T, 0, onesided.SUM),
        lambda w: w.Fetch_and_op(val(), np.zeros(1, I32), T, 0, onesided.SUM))),
    "conflict-fop-put-remote-yes": (True, fenced(
        lambda w: w.Fetch_and_op(val(), np.zeros(1, I32), T, 0, onesided.SUM), put())),
    "conflict-cas-cas-remote-no": (False, fenced(
        lambda w: w.Compare_and_swap(val(), np.zeros(1, I32), np.zeros(1, I32), T, 0),
        lambda w: w.Compare_and_swap(val(), np.zeros(1, I32), np.zeros(1, I32), T, 0))),
    "conflict-cas-put-remote-yes": (True, fenced(
        lambda w: w.Compare_and_swap(val(), np.zeros(1, I32), np.zeros(1, I32), T, 0), put())),
    # sync/
    "sync-fence-3procs-remote-yes": (True, fenced(put(), put())),
    "sync-fence-3procs-remote-no": (False, fence_3procs_no),
    "sync-pscw-remote-yes": (True, pscw(one_epoch=True)),
    "sync-pscw-remote-no": (False, pscw(one_epoch=False)),
    "sync-lock-exclusive-remote-no": (False, locked(onesided.LOCK_EXCLUSIVE, barrier_inside=False)),
    "sync-lock-shared-remote-yes": (True, locked(onesided.LOCK_SHARED, barrier_inside=True)),
    "sync-lock-barrier-remote-no": (False, shared_then_barrier_no),
    "sync-lockall-flushall-remote-no": (False, lockall_flushall(flush=True)),
    "sync-lockall-flushall-remote-yes": (True, lockall_flushall(flush=False)),
    "sync-lock-barrier-sameorigin-remote-yes": (True, lock_same_origin("")),
    "sync-lock-barrier-sameorigin-remote-no": (False, lock_same_origin("flush")),
    "sync-lock-flushlocal-sameorigin-remote-yes": (True, lock_same_origin("flush_local")),
    # sync/009 and 010: a Put to the bytes the Rget reads stands in for the
    # load of its result buffer, before and after the Wait.
    "sync-request-local-yes": (True, request_then_put("rget", wait_first=False)),
    "sync-request-local-no": (False, request_then_put("rget", wait_first=True)),
    # Not RMARaceBench's: what a Request's completion orders, and what not.
    "request-rget-wait-put-sameorigin-no": (False, request_then_put("rget", wait_first=True, epoch="lock")),
    "request-rput-wait-put-sameorigin-yes": (True, request_then_put("rput", wait_first=True, epoch="lock")),
    "request-rgetacc-noop-wait-put-sameorigin-no": (False, request_then_put("rgetacc-noop", wait_first=True)),
    "request-rgetacc-sum-wait-put-sameorigin-yes": (True, request_then_put("rgetacc-sum", wait_first=True)),
    "request-rget-wait-barrier-put-remote-no": (False, rget_wait_barrier_put_no),
    # origin buffers (conflict/001, 002, 008, 009; sync/001-008, 011, 012)
    "conflict-put-load-local-no": (False, origin_buffer(fence_open, fence_open, "put", changes=False)),
    "conflict-put-store-local-yes": (True, origin_buffer(fence_open, fence_open, "put", changes=True)),
    "conflict-acc-load-local-no": (False, origin_buffer(fence_open, fence_open, "acc", changes=False)),
    "conflict-acc-store-local-yes": (True, origin_buffer(fence_open, fence_open, "acc", changes=True)),
    "sync-fence-local-yes": (True, origin_buffer(fence_open, fence_open, "put", changes=True)),
    "sync-fence-local-no": (False, origin_buffer(fence_open, fence_open, "put", changes=True, after_close=True)),
    "sync-lock-local-yes": (True, origin_buffer(lock_open, lock_close, "put", changes=True)),
    "sync-lock-local-no": (False, origin_buffer(lock_open, lock_close, "put", changes=False)),
    "sync-lock-flush-local-yes": (True, origin_buffer(lock_open, lock_close, "acc", changes=True)),
    "sync-lock-flush-local-no": (False, origin_buffer(lock_open, lock_close, "acc", changes=True,
                                                      between=lambda w: w.Flush(T))),
    "sync-lockall-flushlocalall-local-yes": (True, origin_buffer(lockall_open, lockall_close, "put", changes=True)),
    "sync-lockall-flushlocalall-local-no": (False, origin_buffer(lockall_open, lockall_close, "put", changes=True,
                                                                 between=lambda w: w.Flush_local_all())),
    "sync-pscw-local-yes": (True, origin_buffer(pscw_open, pscw_close, "put", changes=True)),
    "sync-pscw-local-no": (False, origin_buffer(pscw_open, pscw_close, "put", changes=True, after_close=True)),
}


def make_window() -> Window:
    if CREATE:
        return Window.Create(np.zeros(64, np.uint8), disp_unit=1, info=INFO, comm=comm)
    return Window.Allocate(64, disp_unit=1, info=INFO, comm=comm)


def run_case(name: str) -> tuple[bool, bool, bool]:
    """(whether some rank was warned of a race, whether every window
    checked, whether the case is in the checker's reach on this path)."""
    _, program = CASES[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        win = make_window()
        harness.check_provider(win)
        path = win.Get_info()["onesided_path"]
        checked = path.startswith("checking(")
        reach = name not in LOCAL or path not in IN_PLACE
        program(win)
        win.Free()
    races = [str(w.message) for w in caught
             if issubclass(w.category, onesided.RaceWarning) and "summary" not in str(w.message)]
    for text in races:
        print(f"rank {rank} {name}: {text}", file=sys.stderr)
    everyone = comm.allgather((bool(races), checked))
    return any(f for f, _ in everyone), all(c for _, c in everyone), reach


def error_mode() -> None:
    """With onesided_check=races:error a race raises RaceError, at the call
    that finds it (the second put of rank A, which races with its first)."""
    win = Window.Allocate(64, disp_unit=1, info=harness.info(onesided_check="races:error"), comm=comm)
    raised = ""
    win.Lock_all()
    if rank == A:
        win.Put(val(), T, 0)
        try:
            win.Put(val(), T, 0)
        except onesided.RaceError as e:
            raised = str(e)
    win.Unlock_all()
    win.Free()
    if rank == A:
        assert raised.count("races.py:") == 2, raised
        print("PASS error-mode", flush=True)


def disagreement() -> None:
    """Checking is agreed at creation: one rank asking for it and the others
    not fails every rank alike."""
    try:
        Window.Allocate(8, info=harness.info(onesided_check="races" if rank == 0 else "off"), comm=comm)
    except onesided.ArgumentError as e:
        assert "onesided_check" in str(e), e
    else:
        raise AssertionError("ranks that disagree on onesided_check made a window")
    if rank == 0:
        print("PASS disagreement", flush=True)


CREATE = "--create" in sys.argv


def main() -> None:
    names = [a for a in sys.argv[1:] if a != "--create"] or list(CASES)
    if names == ["error-mode"]:
        return error_mode()
    if names == ["disagreement"]:
        return disagreement()
    for name in names:
        found, checked, reach = run_case(name)
        if rank == 0:
            print(f"case {name} race={int(CASES[name][0])} reach={int(reach)} found={int(found)} "
                  f"checked={int(checked)}", flush=True)


main()
