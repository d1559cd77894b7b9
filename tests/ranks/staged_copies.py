"""Rank programs for tests/test_staged_copies.py: small puts and gets on
the cross-memory path (`Create` and `Create_dynamic` windows on one host),
which wait in a stage per target and are copied together at the next
completion point (paths/staged_copies.hpp). Rank 0 is the origin, rank 1
the target.

Usage: staged_copies.py CHECK KIND (KIND: create or dynamic). Rank 0 prints
"PASS CHECK"."""

from __future__ import annotations

import gc
import sys

import numpy as np

import harness
import onesided
from onesided import Window

comm = harness.comm()
rank, size = comm.Get_rank(), comm.Get_size()
N = 4096  # int64 elements at the target


def window(kind: str) -> tuple[Window, np.ndarray, int]:
    """The window, rank 1's memory there (zeros) and the displacement of
    its first element as rank 0 addresses it (in elements on a Create
    window, in bytes, an address, on a dynamic one)."""
    mem = np.zeros(N, np.int64)
    if kind == "create":
        win = Window.Create(mem, disp_unit=8, info=harness.info(), comm=comm)
        base = 0
    else:
        win = Window.Create_dynamic(info=harness.info(), comm=comm)
        win.Attach(mem)
        base = comm.allgather(onesided.Get_address(mem))[1]
    assert win.Get_info()["onesided_path"] == "cross-memory", win.Get_info()["onesided_path"]
    return win, mem, base


def at(kind: str, base: int, i: int) -> int:
    return base + (8 * i if kind == "dynamic" else i)


def one(v: int) -> np.ndarray:
    return np.array([v], np.int64)


def check_order(kind: str) -> None:
    """One origin's operations to one target take effect in program order,
    staged puts and gets included, within one epoch and without a flush: a
    Get after Puts sees the last one and a Get before a Put does not see it,
    an Accumulate after a Put adds to it, Puts to the same element end with
    the last, and more Puts than one stage holds (1024 pieces; these are 16
    bytes apart, so none combine) all land. Results of staged Gets are read
    after the Unlock, where MPI makes them valid."""
    win, mem, base = window(kind)
    comm.Barrier()
    if rank == 0:
        after_puts, before_put, after_acc = (np.zeros(1, np.int64) for _ in range(3))
        with win.lock(1):
            for v in range(1, 50):
                win.Put(one(v), 1, at(kind, base, 0))
            win.Get(after_puts, 1, at(kind, base, 0))
            win.Get(before_put, 1, at(kind, base, 0))
            win.Put(one(77), 1, at(kind, base, 0))
            win.Put(one(100), 1, at(kind, base, 1))
            win.Accumulate(one(5), 1, at(kind, base, 1), onesided.SUM)
            win.Get(after_acc, 1, at(kind, base, 1))
            for i in range(2, 2 + 2 * 1500, 2):
                win.Put(one(i), 1, at(kind, base, i))
            for i in range(3, 3 + 2 * 100, 2):  # side by side: they combine
                win.Put(np.array([i, i + 1], np.int64), 1, at(kind, base, i))
        assert after_puts[0] == 49 and before_put[0] == 49 and after_acc[0] == 105, (after_puts, before_put, after_acc)
        comm.Barrier()
        with win.lock(1):  # more Gets than one stage holds, into one array
            evens = np.zeros(1500, np.int64)
            for k in range(1500):
                win.Get(evens[k:k + 1], 1, at(kind, base, 2 + 2 * k))
        assert (evens == np.arange(2, 2 + 2 * 1500, 2)).all(), evens
    else:
        comm.Barrier()
    comm.Barrier()
    if rank == 1:
        assert mem[0] == 77 and mem[1] == 105, mem[:2]
        evens = np.arange(2, 2 + 2 * 1500, 2)
        assert (mem[evens] == evens).all(), mem[evens]
        assert (mem[3:203] == np.arange(3, 203)).all(), mem[3:203]
    comm.Barrier()
    win.Free()


def check_kept(kind: str) -> None:
    """A staged Get's result is written at the next completion point, so
    the window keeps it until then: arrays that exist only for the Get,
    dropped by the caller at once, are still the ones written (arrays made
    after them, which would take their memory if it were freed, keep
    their values)."""
    win, mem, base = window(kind)
    mem[:] = 12345
    comm.Barrier()
    if rank == 0:
        with win.lock(1):
            for k in range(200):
                win.Get(np.zeros(1, np.int64), 1, at(kind, base, k))
            gc.collect()
            others = [np.full(1, -7, np.int64) for _ in range(2000)]
        assert all(o[0] == -7 for o in others), "a staged Get wrote into memory its result no longer owned"
    comm.Barrier()
    win.Free()


def check_completion(kind: str) -> None:
    """Every completion point copies what waits: after Flush, Flush_local,
    Flush_all, an Rput's Wait, a Fence, and PSCW's Complete (each followed
    by a barrier and no other onesided call at rank 0), rank 1 finds the
    value in its memory while rank 0's epoch is still open where it can be,
    and a Get staged before it has its result (rank 1 set it first)."""
    win, mem, base = window(kind)
    mem[100:200] = np.arange(100, 200)
    steps = [("Flush", 1), ("Flush_local", 2), ("Flush_all", 3), ("Rput", 4)]
    comm.Barrier()
    if rank == 0:
        win.Lock(1)
    for name, v in steps:
        if rank == 0:
            got = np.zeros(1, np.int64)
            win.Get(got, 1, at(kind, base, 100 + v))
            if name == "Rput":
                win.Rput(one(v), 1, at(kind, base, v)).Wait()
            else:
                win.Put(one(v), 1, at(kind, base, v))
                getattr(win, name)(*(() if name == "Flush_all" else (1,)))
            assert got[0] == 100 + v, (name, got)
        comm.Barrier()
        if rank == 1:
            assert mem[v] == v, (name, mem[: v + 1])
        comm.Barrier()
    if rank == 0:
        got = np.zeros(1, np.int64)
        win.Get(got, 1, at(kind, base, 150))
        win.Unlock(1)
        assert got[0] == 150, got
    win.Fence()
    if rank == 0:
        win.Put(one(5), 1, at(kind, base, 5))
    win.Fence()
    if rank == 1:
        assert mem[5] == 5, mem[:6]
    win.Fence(onesided.MODE_NOSUCCEED)
    if rank == 0:
        win.Start([1])
        win.Put(one(6), 1, at(kind, base, 6))
        win.Complete()
    else:
        win.Post([0])
        win.Wait()
        assert mem[6] == 6, mem[:7]
    comm.Barrier()
    win.Free()


CHECKS = {"order": check_order, "completion": check_completion, "kept": check_kept}

if __name__ == "__main__":
    name, kind = sys.argv[1], sys.argv[2]
    harness.run({name: lambda: CHECKS[name](kind)})
