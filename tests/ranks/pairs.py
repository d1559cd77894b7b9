"""MAXLOC, MINLOC, REPLACE and NO_OP on MPI's pair types, from every rank at
once, on one data path (docs/semantics.md, issue 29).

Usage: <launcher> -n N pairs.py PATH, PATH one of shared-memory (Allocate on
one host), cross-memory (Create on one host), provider (Allocate with the
shared-memory path off: libfabric, the provider the test names).

Every rank runs ROUNDS rounds against rank 0's window of three pairs per
type: a REPLACE of (x, x) into pair 0 followed by a NO_OP read of it, which
must never see a pair whose halves come from two different writes; a
MAXLOC into pair 1; a MINLOC into pair 2 whose values repeat, so ties are
decided by the index under contention. At the end pair 1 and pair 2 must be
what MPI's rule gives over every rank's operands, and pair 0 one of the
pairs written.
"""

from __future__ import annotations

import sys

import numpy as np

import harness
import onesided
from onesided import Window

comm = harness.comm()
rank, size = comm.Get_rank(), comm.Get_size()
ROUNDS = 150
TYPES = ("TWOINT", "DOUBLE_INT", "LONG_DOUBLE_INT", "SHORT_INT")


def operands(r: int) -> list[int]:
    return [r * 1000 + i for i in range(ROUNDS)]


def minloc_pair(x: int) -> tuple[int, int]:
    # Few distinct values, indices in a scrambled order: the winner among
    # the equal smallest values is decided by the index rule.
    return x % 5, (x * 7919) % 10007


def window(path: str, itemsize: int) -> Window:
    if path == "cross-memory":
        mem = np.zeros(3 * itemsize, np.uint8)
        return Window.Create(mem, itemsize, info=harness.info(), comm=comm)
    info = harness.info(**({"onesided_shared_memory": "off"} if path == "provider" else {}))
    return Window.Allocate(3 * itemsize, itemsize, info=info, comm=comm)


def check(path: str, type_name: str) -> str:
    dt = getattr(onesided, type_name)
    win = window(path, dt.itemsize)
    harness.check_provider(win)
    assert win.atomics.path == path, (win.atomics.path, path)
    report = win.atomics["maxloc", type_name.lower()]
    assert report.native == (path == "shared-memory" and dt.itemsize == 8), (path, type_name, report)
    if rank == 0:
        np.frombuffer(win, dt)[:] = [(0, 0), (-1, 0), (9, 0)]
    comm.Barrier()
    one, got = np.zeros(1, dt), np.zeros(1, dt)
    torn = 0
    with win.lock_all():
        for x in operands(rank):
            one[0] = (x, x)
            win.Accumulate(one, 0, 0, onesided.REPLACE)
            win.Get_accumulate(None, got, 0, 0, onesided.NO_OP)
            win.Flush(0)
            value, index = got[0]
            torn += int(value) != index
            win.Accumulate(one, 0, 1, onesided.MAXLOC)
            one[0] = minloc_pair(x)
            win.Accumulate(one, 0, 2, onesided.MINLOC)
            win.Flush(0)
    comm.Barrier()
    assert torn == 0, f"{torn} NO_OP reads saw a torn {type_name}"
    if rank == 0:
        win.Sync()
        mem = np.frombuffer(win, dt)
        every = [x for r in range(size) for x in operands(r)]
        v0, k0 = mem[0]
        assert int(v0) == k0 and k0 in every, (type_name, mem[0])
        assert (int(mem[1][0]), mem[1][1]) == (max(every), max(every)), (type_name, mem[1])
        assert (int(mem[2][0]), mem[2][1]) == min(minloc_pair(x) for x in every), (type_name, mem[2])
    comm.Barrier()
    win.Free()
    return f"{type_name} {'native' if report.native else 'software'}"


def main() -> None:
    path = sys.argv[1]
    done = [check(path, t) for t in TYPES]
    if rank == 0:
        print(f"PASS pairs {path}: {', '.join(done)}", flush=True)


main()
