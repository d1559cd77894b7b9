"""Cases for synchronisation: Fence, Lock/Unlock, Lock_all, Flush*, Sync, PSCW, and their misuse."""

from __future__ import annotations

import time
from typing import Any, Callable

from ._support import SPIN_DEADLINE, attempt, case, keep, local_after_barrier, lock_op, peer_of, window


# -- synchronisation ------------------------------------------------------------------------------


@case
def fence_with_assertions(Win, MPI, comm, np):
    rank, peer = peer_of(comm)
    with window(Win, MPI, comm, np) as (win, mem):
        win.Fence(MPI.MODE_NOPRECEDE)
        r = attempt(win.Put, keep(np.array([9, 9], "i") + rank), peer, 2)
        win.Fence(MPI.MODE_NOSTORE | MPI.MODE_NOSUCCEED)
        local = mem.tolist()
    return r, local


@case
def lock_exclusive_default(Win, MPI, comm, np):
    """Lock(rank) is an exclusive lock; Put then Get in one epoch, Flush between."""
    def op(win, peer, rank):
        win.Put(keep(np.array([40, 41], "i") + rank), peer, 1)
        win.Flush(peer)
        got = np.zeros(3, "i")
        win.Get(got, peer, 0)
        win.Flush(peer)
        return got

    rank, peer = peer_of(comm)
    with window(Win, MPI, comm, np) as (win, mem):
        comm.Barrier()
        win.Lock(peer)
        r = attempt(op, win, peer, rank)
        win.Unlock(peer)
        local = local_after_barrier(win, MPI, comm, mem)
    return r, local


@case
def lock_shared_flush_local(Win, MPI, comm, np):
    def op(win, peer, rank):
        win.Accumulate(keep(np.array([1, 1], "i")), peer, 2, MPI.SUM)
        win.Flush_local(peer)
        got = np.zeros(2, "i")
        win.Get_accumulate(keep(np.zeros(2, "i")), got, peer, 2, MPI.NO_OP)
        win.Flush(peer)
        return got

    return lock_op(Win, MPI, comm, np, op, lock="shared")


@case
def lock_with_nocheck(Win, MPI, comm, np):
    rank, peer = peer_of(comm)
    with window(Win, MPI, comm, np) as (win, mem):
        comm.Barrier()
        r = attempt(lambda: (win.Lock(peer, MPI.LOCK_SHARED, MPI.MODE_NOCHECK),
                             win.Put(keep(np.array([8], "i")), peer, 0), win.Unlock(peer)))
        local = local_after_barrier(win, MPI, comm, mem)
    return r, local


@case
def lock_all_flush_all(Win, MPI, comm, np):
    def op(win, peer, rank):
        win.Put(keep(np.array([21], "i") + rank), peer, 0)
        win.Flush_all()
        win.Put(keep(np.array([22], "i") + rank), peer, 1)
        win.Flush_local_all()
        got = np.zeros(2, "i")
        win.Get(got, peer, 0)
        win.Flush(peer)
        return got

    return lock_op(Win, MPI, comm, np, op, lock="all")


@case
def lock_all_nocheck_sync(Win, MPI, comm, np):
    """Lock_all(MODE_NOCHECK), a local store, Sync, barrier: the peer reads it."""
    rank, peer = peer_of(comm)
    with window(Win, MPI, comm, np, kind="Allocate") as (win, mem):
        comm.Barrier()
        win.Lock_all(MPI.MODE_NOCHECK)
        mem[0] = 1000 + rank
        r1 = attempt(win.Sync)
        comm.Barrier()
        got = np.zeros(1, "i")
        r2 = attempt(lambda: (win.Get(got, peer, 0), win.Flush(peer)))
        win.Unlock_all()
        comm.Barrier()
    return r1, r2, got.tolist()


@case
def lock_bad_lock_type(Win, MPI, comm, np):
    rank, peer = peer_of(comm)
    with window(Win, MPI, comm, np) as (win, mem):
        r = attempt(win.Lock, peer, 12345)
        comm.Barrier()
    return r


@case
def lock_rank_out_of_range(Win, MPI, comm, np):
    with window(Win, MPI, comm, np) as (win, mem):
        r = attempt(win.Lock, comm.Get_size(), MPI.LOCK_SHARED)
        comm.Barrier()
    return r


@case
def unlock_without_lock(Win, MPI, comm, np):
    rank, peer = peer_of(comm)
    with window(Win, MPI, comm, np) as (win, mem):
        r = attempt(win.Unlock, peer)
        comm.Barrier()
    return r


def _pscw(Win: Any, MPI: Any, comm: Any, np: Any, group_of: Callable[[Any, int], Any], test: bool = False) -> Any:
    """Every rank posts to and starts on its peer (a ring of two)."""
    rank, peer = peer_of(comm)
    with window(Win, MPI, comm, np) as (win, mem):
        group = group_of(win, peer)
        try:
            win.Post(group)
            win.Start(group)
            r = attempt(win.Put, keep(np.array([60, 61], "i") + rank), peer, 3)
            win.Complete()
            if test:
                deadline = time.monotonic() + SPIN_DEADLINE
                done = win.Test()
                while not done and time.monotonic() < deadline:
                    done = win.Test()
                waited = (type(done).__name__, done)
            else:
                waited = win.Wait()
            local = mem.tolist()
        finally:
            group.Free()
    return r, waited, local


def _comm_group_of(comm: Any) -> Callable[[Any, int], Any]:
    def group_of(win: Any, peer: int) -> Any:
        whole = comm.Get_group()
        try:
            return whole.Incl([peer])
        finally:
            whole.Free()

    return group_of


@case
def pscw_comm_group(Win, MPI, comm, np):
    """Post/Start with groups made from comm.Get_group(); Wait returns True."""
    return _pscw(Win, MPI, comm, np, _comm_group_of(comm))


@case
def pscw_test(Win, MPI, comm, np):
    """Win.Test ends the exposure epoch once the peer completed (bounded loop)."""
    return _pscw(Win, MPI, comm, np, _comm_group_of(comm), test=True)


@case
def pscw_window_group(Win, MPI, comm, np):
    """Post/Start with groups made from win.Get_group()."""
    def group_of(win, peer):
        whole = win.Get_group()
        try:
            return whole.Incl([peer])
        finally:
            whole.Free()

    return _pscw(Win, MPI, comm, np, group_of)
