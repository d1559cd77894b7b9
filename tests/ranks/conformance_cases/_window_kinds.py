"""Cases for shared and dynamic windows, and for a window whose communicator was freed."""

from __future__ import annotations

from ._support import _with_flavor, attempt, case, keep, peer_of


# -- shared windows ------------------------------------------------------------------------------


@case
def shared_query_peer(Win, MPI, comm, np):
    """Stores into the own segment are loads in the peer's (through Shared_query)."""
    rank, peer = peer_of(comm)
    win = Win.Allocate_shared(16, 4, MPI.INFO_NULL, comm)
    try:
        mine, mine_unit = win.Shared_query(rank)
        theirs, unit = win.Shared_query(peer)
        win.Lock_all(MPI.MODE_NOCHECK)
        np.frombuffer(mine, "i")[:] = [rank + 1, rank + 2, rank + 3, rank + 4]
        win.Sync()
        comm.Barrier()
        win.Sync()
        values = np.frombuffer(theirs, "i").tolist()
        win.Unlock_all()
        comm.Barrier()
        return (len(theirs), unit, mine_unit, values)
    finally:
        win.Free()


@case
def shared_query_ndarray_idiom(Win, MPI, comm, np):
    """mpi4py's documented idiom: rank 0 allocates everything, the others 0
    bytes; every rank maps rank 0's segment with np.ndarray(buffer=...)."""
    rank = comm.Get_rank()
    win = Win.Allocate_shared(8 * 4 if rank == 0 else 0, 8, MPI.INFO_NULL, comm)
    try:
        buf, itemsize = win.Shared_query(0)
        ary = np.ndarray(buffer=buf, dtype="d", shape=(4,))
        win.Lock_all(MPI.MODE_NOCHECK)
        if rank == 1:
            ary[:] = [1.5, 2.5, 3.5, 4.5]
        win.Sync()
        comm.Barrier()
        win.Sync()
        values = ary.tolist()
        win.Unlock_all()
        comm.Barrier()
        return (itemsize, values)
    finally:
        win.Free()


@case
def shared_query_proc_null(Win, MPI, comm, np):
    """Shared_query(MPI.PROC_NULL): the first rank with a non-empty segment."""
    rank = comm.Get_rank()
    win = Win.Allocate_shared(0 if rank == 0 else 24, 4, MPI.INFO_NULL, comm)
    try:
        buf, unit = win.Shared_query(MPI.PROC_NULL)
        return (len(buf), unit)
    finally:
        win.Free()


@case
def shared_query_fill_zero(Win, MPI, comm, np):
    """The Shared_query buffer takes ``buf[:] = 0`` (it is an MPI.buffer)."""
    rank = comm.Get_rank()
    win = Win.Allocate_shared(16, 4, MPI.INFO_NULL, comm)
    try:
        buf, _ = win.Shared_query(rank)
        r = attempt(buf.__setitem__, slice(None), 0)
        comm.Barrier()
        return r
    finally:
        win.Free()


# -- dynamic windows -----------------------------------------------------------------------------


@case
def dynamic_attrs(Win, MPI, comm, np):
    return _with_flavor(Win, MPI, comm, np, "dynamic", lambda w: w.attrs)


@case
def dynamic_get_attr_base_size(Win, MPI, comm, np):
    return _with_flavor(Win, MPI, comm, np, "dynamic", lambda w: (w.Get_attr(MPI.WIN_BASE), w.Get_attr(MPI.WIN_SIZE)))


@case
def dynamic_tomemory(Win, MPI, comm, np):
    """An empty buffer at address 0: ``MPI.Get_address(win.tomemory()) == 0``."""
    return _with_flavor(Win, MPI, comm, np, "dynamic",
                        lambda w: (len(w.tomemory()), MPI.Get_address(w.tomemory())))


@case
def dynamic_attach_put_detach(Win, MPI, comm, np):
    """Attach memory, exchange MPI.Get_address of it, Put at the peer's
    address, Detach."""
    rank, peer = peer_of(comm)
    win = Win.Create_dynamic(MPI.INFO_NULL, comm)
    try:
        buf = np.full(4, -1, "i")
        win.Attach(buf)
        addresses = comm.allgather(MPI.Get_address(buf))
        win.Lock_all()
        r = attempt(lambda: (win.Put(keep(np.array([70, 71], "i") + rank), peer, addresses[peer] + 4), win.Flush(peer)))
        win.Unlock_all()
        comm.Barrier()
        values = buf.tolist()
        win.Detach(buf)
        return (r, values)
    finally:
        win.Free()


# -- the communicator freed after the window was created ----------------------------------------------


@case
def comm_freed_then_fence(Win, MPI, comm, np):
    """The window keeps its own group: the communicator may be freed."""
    rank, peer = peer_of(comm)
    dup = comm.Dup()
    win = Win.Allocate(16, 4, MPI.INFO_NULL, dup)
    dup.Free()
    r1 = attempt(win.Fence)
    r2 = attempt(win.Put, keep(np.array([5], "i") + rank), peer, 1)
    r3 = attempt(win.Fence)
    local = np.frombuffer(win, "i").tolist()
    r4 = attempt(win.Free)
    return (r1, r2, r3, local[1], r4)


@case
def comm_freed_then_lock(Win, MPI, comm, np):
    rank, peer = peer_of(comm)
    dup = comm.Dup()
    win = Win.Allocate(16, 4, MPI.INFO_NULL, dup)
    dup.Free()
    r = attempt(lambda: (win.Lock(peer), win.Put(keep(np.array([6], "i")), peer, 2), win.Unlock(peer)))
    comm.Barrier()
    r2 = attempt(win.Free)
    return (r, r2)


@case
def comm_freed_then_group(Win, MPI, comm, np):
    dup = comm.Dup()
    win = Win.Allocate(16, 4, MPI.INFO_NULL, dup)
    dup.Free()
    def body():
        g = win.Get_group()
        try:
            return (g.Get_size(), g.Get_rank())
        finally:
            g.Free()

    r = attempt(body)
    r2 = attempt(win.Free)
    return (r, r2)
