"""Rank programs for tests/test_alloc_mem.py: `Create` windows over memory
from onesided.Alloc_mem, which every rank of a window on one host maps, so
the window takes the shared-memory path (memory/joined_segment.cpp).

Usage: alloc_mem.py CHECK. Rank 0 prints "PASS CHECK"."""

from __future__ import annotations

import numpy as np

import harness
import onesided
from onesided import Window

comm = harness.comm()
rank, size = comm.Get_rank(), comm.Get_size()


def create(mem: object, disp_unit: int, path: str) -> Window:
    win = Window.Create(mem, disp_unit=disp_unit, info=harness.info(), comm=comm)
    assert win.Get_info()["onesided_path"] == path, (rank, win.Get_info()["onesided_path"], path)
    assert win.atomics.path == path, win.atomics.path
    return win


def tickets(win: Window, mem: np.ndarray) -> None:
    """Every rank, the target included, takes tickets from rank 0's counter
    under Lock_all: exactly 0 .. size*N-1, each once."""
    n = 300
    harness.take_tickets(win, n)
    comm.Barrier()
    if rank == 0:
        win.Sync()
        assert mem[0] == size * n, mem
    comm.Barrier()


def puts_and_gets(win: Window, mem: np.ndarray) -> None:
    """Each rank puts its mark into every rank's slot [rank], then reads
    every rank's whole window: each slot holds its writer's mark."""
    for t in range(size):
        with win.lock(t):
            win.Put(np.array([1000 * (t + 1) + rank], np.int64), t, 1 + rank)
    comm.Barrier()
    for t in range(size):
        seen = np.zeros(size, np.int64)
        with win.lock(t, shared=True):
            win.Get(seen, t, 1)
        assert list(seen) == [1000 * (t + 1) + r for r in range(size)], (rank, t, seen)
    win.Sync()
    assert list(mem[1:1 + size]) == [1000 * (rank + 1) + r for r in range(size)], mem
    comm.Barrier()


def check_shared_path() -> None:
    """The block itself, a numpy view of it, and a slice at an odd
    element offset: each window is on the shared-memory path, its atomics
    run on CPU instructions, data and atomics are exact from every rank,
    and Shared_query reaches every rank's memory by load/store."""
    block = onesided.Alloc_mem(8 * 64)
    whole = np.frombuffer(block, np.int64)
    for mem, unit in ((whole, 8), (whole[3:3 + 1 + size], 8)):
        mem[:] = 0
        win = create(mem, unit, "shared-memory")
        assert win.atomics.executor.kind == "cpu", win.atomics.executor
        tickets(win, mem)
        puts_and_gets(win, mem)
        peer = (rank + 1) % size
        view, du = win.Shared_query(peer)
        assert du == 8 and len(view) == 8 * mem.size, (du, len(view))
        assert np.frombuffer(view, np.int64)[1 + rank] == 1000 * (peer + 1) + rank
        comm.Barrier()
        win.Free()
    win = create(block, 1, "shared-memory")  # the buffer as it came
    win.Free()
    onesided.Free_mem(block)


def check_mixed() -> None:
    """Rank 0 exposes plain numpy memory, the others Alloc_mem memory:
    every rank takes the cross-memory path (the group decides, never one
    rank), and atomics and data are exact."""
    block = onesided.Alloc_mem(8 * 16)
    mem = np.zeros(16, np.int64) if rank == 0 else np.frombuffer(block, np.int64)
    win = create(mem, 8, "cross-memory")
    tickets(win, mem)
    puts_and_gets(win, mem)
    win.Free()
    onesided.Free_mem(block)


def check_bounds() -> None:
    """A target range past the end of a peer's Alloc_mem window raises
    BoundsError at the origin, naming the range, and writes nothing."""
    block = onesided.Alloc_mem(64)
    mem = np.frombuffer(block, np.int64)[:4]  # the window is the first 32 bytes of the block
    win = create(mem, 8, "shared-memory")
    peer = (rank + 1) % size
    with win.lock(peer):
        for disp, count in ((4, 1), (3, 2), (-1, 1)):
            try:
                win.Put(np.full(count, 7, np.int64), peer, disp)
            except onesided.BoundsError as e:
                assert "disp" in str(e) or "target" in str(e), str(e)
            else:
                raise AssertionError(f"Put at {disp} x {count} past a 4-element window was accepted")
        try:
            win.Fetch_and_op(np.ones(1, np.int64), np.zeros(1, np.int64), peer, 4)
        except onesided.BoundsError:
            pass
        else:
            raise AssertionError("Fetch_and_op past the window was accepted")
    comm.Barrier()
    assert not np.frombuffer(block, np.int64).any(), np.frombuffer(block, np.int64)
    win.Free()


def check_free_mem() -> None:
    """Free_mem of memory a live window exposes raises ArgumentError and
    frees nothing (the window keeps working); after Free it succeeds."""
    block = onesided.Alloc_mem(64)
    win = create(np.frombuffer(block, np.int64), 8, "shared-memory")
    try:
        onesided.Free_mem(block)
    except onesided.ArgumentError as e:
        assert "live window" in str(e), str(e)
    else:
        raise AssertionError("Free_mem of a live window's memory was accepted")
    peer = (rank + 1) % size
    with win.lock(peer):
        win.Put(np.array([rank + 5], np.int64), peer, 0)
    comm.Barrier()
    win.Sync()
    assert np.frombuffer(block, np.int64)[0] == (rank - 1) % size + 5, np.frombuffer(block, np.int64)
    comm.Barrier()
    win.Free()
    onesided.Free_mem(block)


CHECKS = {"shared": check_shared_path, "mixed": check_mixed, "bounds": check_bounds, "free": check_free_mem}

if __name__ == "__main__":
    harness.run(CHECKS)
