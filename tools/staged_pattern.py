"""Small puts and gets on Create windows when nothing combines: 64 ops of
8 B per Flush, each to its own target element (16 bytes apart) and from or
into its own origin element (also 16 bytes apart), so the cross-memory
path's stage (cpp/src/paths/staged_copies.hpp) holds 64 pieces per drain,
beside the same ops to one element (figure 2b/2c's pattern, where the
stage holds one piece), for onesided and MPI.Win, in one job.

    mpiexec.mpich -n 2 .venv/bin/python tools/staged_pattern.py [--reps 7]

Rank 0 is the origin, rank 1 the target, inside Lock_all on both windows.
Prints us per op, median [min, max] of the repetitions, the four columns
taking turns; docs/performance.md, "Bandwidth by window kind", quotes it.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any, Callable

import numpy as np
from mpi4py import MPI

import onesided

BATCH, LOOPS = 64, 400


def seconds_per_op(op: Callable[..., None], flush: Callable[[int], None], calls: list[tuple[Any, ...]]) -> float:
    for args in calls:  # warm-up
        op(*args)
    flush(1)
    t0 = time.perf_counter()
    for _ in range(LOOPS):
        for args in calls:
            op(*args)
        flush(1)
    return (time.perf_counter() - t0) / (LOOPS * len(calls))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7)
    reps = parser.parse_args().reps
    comm = MPI.COMM_WORLD
    mem_ours, mem_theirs = np.zeros(2 * BATCH, np.int64), np.zeros(2 * BATCH, np.int64)
    ours = onesided.Window.Create(mem_ours, 8, comm=comm)
    theirs = MPI.Win.Create(mem_theirs, disp_unit=8, comm=comm)
    assert ours.Get_info()["onesided_path"] == "cross-memory", ours.Get_info()["onesided_path"]
    local = np.zeros(2 * BATCH, np.int64)
    spread = [(local[2 * k : 2 * k + 1], 1, 2 * k) for k in range(BATCH)]
    same = [(local[0:1], 1, 0)] * BATCH
    results: dict[str, list[float]] = {}
    comm.Barrier()
    if comm.rank == 0:
        ours.Lock_all()
        theirs.Lock_all()
        for _ in range(reps):
            for op in ("Put", "Get"):
                for pattern, calls in (("64 elements", spread), ("one element", same)):
                    for lib, win in (("onesided", ours), ("MPI.Win", theirs)):
                        key = f"{op} 8 B, {pattern}, {lib}"
                        results.setdefault(key, []).append(seconds_per_op(getattr(win, op), win.Flush, calls))
        ours.Unlock_all()
        theirs.Unlock_all()
        print(f"{BATCH} ops per Flush, {LOOPS} batches, median [min, max] of {reps} repetitions, us per op")
        for key, values in results.items():
            us = [v * 1e6 for v in values]
            print(f"{key:40s} {statistics.median(us):7.3f} [{min(us):.3f}, {max(us):.3f}]")
    comm.Barrier()
    ours.Free()
    theirs.Free()


if __name__ == "__main__":
    main()
