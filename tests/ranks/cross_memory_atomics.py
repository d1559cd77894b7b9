"""Rank programs for tests/test_cross_memory_atomics.py: the atomics of
`Create` windows on one host, which the calling rank applies to the
target's memory by cross-memory attach under the target's lock
(paths/cross_memory_atomics.hpp), and `Create_dynamic` windows on the same
path (memory/published_regions.hpp).

Usage: cross_memory_atomics.py CHECK [GRANULARITY]. Rank 0 prints "PASS CHECK"."""

from __future__ import annotations

import os
import signal
import sys

import numpy as np

import harness
import onesided
from onesided import Window

comm = harness.comm()
rank, size = comm.Get_rank(), comm.Get_size()


def window(mem: np.ndarray, **info: str) -> Window:
    win = Window.Create(mem, disp_unit=mem.itemsize, info=harness.info(**info), comm=comm)
    assert win.atomics.path == "cross-memory", win.atomics.path
    assert win.atomics.executor.kind == "origin", win.atomics.executor
    assert not any(p.native for p in win.atomics.by_dtype().values()), "a dtype left on the provider's atomics"
    return win


def check_tickets() -> None:
    """Every rank, rank 0 included on its own window, takes tickets from
    rank 0's counter with Fetch_and_op and adds to a second counter with
    Compare_and_swap retry loops, all under Lock_all (shared: nothing but
    the atomic lock keeps two ranks' read-modify-writes apart). The
    tickets are exactly 0 .. size*N-1, each once, and both counters exact."""
    n, m = 300, 40
    mem = np.zeros(2, np.int64)
    win = window(mem)
    harness.take_tickets(win, n)
    res = np.zeros(1, np.int64)
    comm.Barrier()
    with win.lock_all():
        for _ in range(m):
            guess = 0
            while True:
                win.Compare_and_swap(np.array([guess + 1], np.int64), np.array([guess], np.int64), res, 0, 1)
                if res[0] == guess:
                    break
                guess = int(res[0])
    comm.Barrier()
    if rank == 0:
        win.Sync()
        assert mem[0] == size * n and mem[1] == size * m, mem
    comm.Barrier()
    win.Free()


def check_vectors() -> None:
    """Every rank adds its vector of long doubles and complex numbers
    (dtypes no CPU or provider atomic covers) to rank 0's, element by
    element, many times, concurrently under Lock_all, with the info key
    mpi_accumulate_granularity as given (0: one hold per call; 8: per
    element): every element ends exact, and Get_accumulate NO_OP reads
    without writing back (rank 0's own stores between epochs survive)."""
    granularity = sys.argv[2] if len(sys.argv) > 2 else "0"
    k, rounds = 37, 60
    ld = np.zeros(k, np.longdouble)
    cx = np.zeros(k, np.complex128)
    wl = window(ld, mpi_accumulate_granularity=granularity)
    wc = window(cx, mpi_accumulate_granularity=granularity)
    assert wl.atomics.granularity == int(granularity)
    add_l = np.arange(1, k + 1, dtype=np.longdouble) * (rank + 1)
    add_c = (np.arange(k) + 1j * (rank + 1)).astype(np.complex128)
    comm.Barrier()
    with wl.lock_all(), wc.lock_all():
        for _ in range(rounds):
            wl.Accumulate(add_l, 0, op=onesided.SUM)
            wc.Accumulate(add_c, 0, op=onesided.SUM)
    comm.Barrier()
    if rank == 0:
        wl.Sync()
        wc.Sync()
        total = sum(r + 1 for r in range(size))
        assert (ld == np.arange(1, k + 1, dtype=np.longdouble) * total * rounds).all(), ld
        assert (cx == (np.arange(k) * size + 1j * total) * rounds).all(), cx
        ld[:] = -1  # rank 0's own stores, between epochs
    comm.Barrier()
    seen = np.zeros(k, np.longdouble)
    with wl.lock(0, shared=True):
        wl.Get_accumulate(np.zeros(k, np.longdouble), seen, 0, op=onesided.NO_OP)
    assert (seen == -1).all(), seen
    comm.Barrier()
    wl.Free()
    wc.Free()


def check_dynamic() -> None:
    """A dynamic window on one host is on the cross-memory path, and its
    origins check targets' addresses in the tables the targets publish in
    shared memory, asking the target nothing: with rank 1 stopped (SIGSTOP,
    every thread), rank 0 opens epochs on it (each one a table fetch by
    message on the provider path, which would wait for rank 1 forever),
    puts, gets and fetches by address, and gets BoundsError for an address
    rank 1 detached before it stopped. Rank 1 finds the values when it runs
    again; the detached array was not written."""
    win = Window.Create_dynamic(info=harness.info(), comm=comm)
    assert win.Get_info()["onesided_path"] == "cross-memory", win.Get_info()["onesided_path"]
    assert win.atomics.executor.kind == "origin", win.atomics.executor
    kept, dropped = np.zeros(8, np.int64), np.zeros(8, np.int64)
    win.Attach(kept)
    win.Attach(dropped)
    addrs = comm.allgather((onesided.Get_address(kept), onesided.Get_address(dropped)))
    pids = comm.allgather(os.getpid())
    if rank == 1:
        win.Detach(dropped)
    comm.Barrier()
    if rank == 0:
        harness.stop(pids[1])
        try:
            with win.lock(1):
                win.Put(np.arange(1, 5, dtype=np.int64), 1, addrs[1][0])
            got, old = np.zeros(4, np.int64), np.zeros(1, np.int64)
            with win.lock_all():
                win.Get(got, 1, addrs[1][0])
                win.Flush(1)
                win.Fetch_and_op(np.array([10], np.int64), old, 1, addrs[1][0] + 8 * 7, onesided.SUM)
                try:
                    win.Put(np.ones(1, np.int64), 1, addrs[1][1])
                except onesided.BoundsError:
                    pass
                else:
                    raise AssertionError("a put to detached memory went through")
            assert (got == np.arange(1, 5)).all() and old[0] == 0, (got, old)
        finally:
            os.kill(pids[1], signal.SIGCONT)
    comm.Barrier()
    if rank == 1:
        assert (kept[:4] == np.arange(1, 5)).all() and kept[7] == 10, kept
        assert (dropped == 0).all(), dropped
    comm.Barrier()
    win.Free()


CHECKS = {"tickets": check_tickets, "vectors": check_vectors, "dynamic": check_dynamic}

if __name__ == "__main__":
    harness.run(CHECKS)
