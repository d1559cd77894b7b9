"""MPI 4.1's window additions on real ranks: Shared_query on every flavor
and the info key mpi_accumulate_granularity.

Usage (from tests/test_mpi41.py): <launcher> -n N mpi41.py CHECK
Every rank asserts; rank 0 prints "PASS CHECK" at the end.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

import harness
import onesided
from onesided import Window

comm = harness.comm()
rank, size = comm.Get_rank(), comm.Get_size()
INFO = harness.info()
MPI_COMM = os.environ.get("ONESIDED_TEST_COMM") == "mpi"


def address(buf: Any) -> int:
    """The first byte's address: 0 for an empty buffer (MPI's null baseptr)."""
    if MPI_COMM:
        from mpi4py import MPI

        return MPI.Get_address(buf)
    # onesided.buffer is a numpy array, which gives an empty array an
    # address of its own: .address is the buffer's (docs/porting.md).
    return buf.address


def nulls() -> list[int]:
    out = [onesided.PROC_NULL]
    if MPI_COMM:
        from mpi4py import MPI

        out.append(MPI.PROC_NULL)
    return out


def check_views(win: Window, nbytes: list[int], units: list[int], reachable: set[int]) -> dict[int, np.ndarray]:
    """Shared_query(r) for every r (and PROC_NULL): the real memory of the
    reachable ranks (size, disp_unit, writable), an empty buffer at address 0
    elsewhere, with r's disp_unit either way."""
    views = {}
    for r in range(size):
        buf, du = win.Shared_query(r)
        assert du == units[r], (r, du, units[r])
        if r in reachable:
            assert len(buf) == nbytes[r], (r, len(buf), nbytes[r])
            assert not buf.readonly
            views[r] = np.frombuffer(buf, np.uint8)
        else:
            assert len(buf) == 0 and address(buf) == 0, (r, len(buf), address(buf))
    first = next((r for r in range(size) if nbytes[r] > 0), 0)
    for null in nulls():
        buf, du = win.Shared_query(null)
        assert du == units[first], (null, du)
        if first in reachable:
            assert len(buf) == nbytes[first] and address(buf) == address(win.Shared_query(first)[0])
        else:
            assert len(buf) == 0 and address(buf) == 0, (null, len(buf))
    return views


def check_seen_by_all(win: Window, views: dict[int, np.ndarray], own: np.ndarray) -> None:
    """Every rank stores a mark into every segment it reaches; after
    Sync/Barrier/Sync each rank's own memory holds the marks of the ranks
    that reached it (and its own), where the window's RMA reads them too."""
    for r, v in views.items():
        if len(v) > rank:
            v[rank] = 100 + rank
    win.Sync()
    comm.Barrier()
    win.Sync()
    got = np.zeros(len(own), np.uint8)
    if len(own):
        win.Lock(rank, onesided.LOCK_SHARED)
        win.Get(got, rank)
        win.Unlock(rank)
    for r in range(size):
        if r < len(own):
            writer_reaches_me = r == rank or len(views) == size  # shared: every rank reaches every segment
            assert own[r] == (100 + r if writer_reaches_me else 0), (r, own[r])
            assert got[r] == own[r]
    comm.Barrier()


def check_shared_query() -> None:
    """Shared_query on each flavor, sizes differing by rank (rank 0's
    segment empty, so PROC_NULL means rank 1) and disp_units too."""
    assert size >= 2
    nbytes = [0] + [8 * (r + 1) for r in range(1, size)]
    units = [1 + r for r in range(size)]
    everyone = set(range(size))
    me = {rank} if nbytes[rank] else set()

    # Create: the caller's own memory only (the others' is in their processes).
    memory = np.zeros(nbytes[rank], np.uint8)
    win = Window.Create(memory, units[rank], info=INFO, comm=comm)
    views = check_views(win, nbytes, units, me)
    if rank in views:
        assert address(win.Shared_query(rank)[0]) == memory.ctypes.data
        views[rank][0] = 7  # the view is the user's memory itself
        assert memory[0] == 7
        memory[0] = 0
    check_seen_by_all(win, views, memory)
    win.Free()

    # Allocate: every segment on the shared-memory path, else the own one.
    for shared_memory in ("on", "off"):
        win = Window.Allocate(nbytes[rank], units[rank], info=dict(INFO, onesided_shared_memory=shared_memory),
                              comm=comm)
        on_path = win.Get_info()["onesided_path"] == "shared-memory"
        assert on_path == (shared_memory == "on" and INFO.get("provider", "shm") == "shm"), win.Get_info()
        views = check_views(win, nbytes, units, everyone if on_path else me)
        own = np.frombuffer(win, np.uint8)
        if nbytes[rank]:
            assert address(win.Shared_query(rank)[0]) == own.ctypes.data == win.attrs[0]
        check_seen_by_all(win, views, own)
        win.Free()

    # Allocate_shared: every segment, as before MPI 4.1.
    win = Window.Allocate_shared(nbytes[rank], units[rank], info=INFO, comm=comm)
    views = check_views(win, nbytes, units, everyone)
    check_seen_by_all(win, views, np.frombuffer(win, np.uint8))
    win.Free()

    # Create_dynamic: no segment, attached memory or not.
    win = Window.Create_dynamic(info=INFO, comm=comm)
    attached = np.zeros(64, np.uint8)
    win.Attach(attached)
    check_views(win, [0] * size, [1] * size, set())
    win.Detach(attached)
    win.Free()


def check_granularity_exact(granularity: str) -> None:
    """Every rank adds 1 to each element of rank 0's large window, many
    times, concurrently, on the software atomics path (rank 0 applying its
    own in its calling thread while its progress thread applies the
    others'), with mpi_accumulate_granularity splitting each op into holds of
    a few elements: every element ends exact, and Get_accumulate's fetched
    old values are whole elements (each a multiple of the step)."""
    n, reps = 1 << 16, 12
    info = dict(INFO, onesided_atomics="software", mpi_accumulate_granularity=granularity)
    for dtype in (np.int64, np.complex128):
        win = Window.Allocate(n * np.dtype(dtype).itemsize if rank == 0 else 0, np.dtype(dtype).itemsize,
                              info=info, comm=comm)
        assert win.Get_info()["mpi_accumulate_granularity"] == granularity
        assert not win.atomics.by_dtype()[np.dtype(dtype).name].native
        step = np.ones(n, dtype) * (1 + 1j if dtype == np.complex128 else 1)
        old = np.zeros(n, dtype)
        comm.Barrier()
        win.Lock_all()
        for i in range(reps):
            if i % 3 == 2:
                win.Get_accumulate(step, old, 0, op=onesided.SUM)
                win.Flush(0)
                assert (old.real % 1 == 0).all() and (old.real >= 0).all()
                if dtype == np.complex128:
                    assert (old.real == old.imag).all(), "an element was torn"
            else:
                win.Accumulate(step, 0, op=onesided.SUM)
        win.Unlock_all()
        comm.Barrier()
        if rank == 0:
            mem = np.frombuffer(win, dtype)
            want = step * reps * size
            bad = np.flatnonzero(mem != want)
            assert len(bad) == 0, f"{dtype.__name__}: {len(bad)} elements lost updates, e.g. {mem[bad[:4]]} != {want[0]}"
        comm.Barrier()
        win.Free()


CHECKS = {
    "shared_query": check_shared_query,
    "granularity_exact": lambda: check_granularity_exact(sys.argv[2]),
}

if __name__ == "__main__":
    harness.run(CHECKS)
