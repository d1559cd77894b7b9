"""Latency of onesided next to mpi4py's ``MPI.Win``, measured in one run.

Run on two ranks under MPI (the same communicator serves both libraries)::

    mpiexec -n 2 python -m onesided.bench [--quick] [--iters N] [--reps R]

A second table times the atomics on their native and software paths, on
shm and tcp (skipped with --quick).

Rank 0 is the origin, rank 1 the passive target, and each library gets the
target behaviour it needs at its best: for MPI.Win the target spins inside
MPI_Barrier (MPICH progresses passive-target RMA only inside MPI calls); for
onesided the target naps while testing a non-blocking barrier, leaving the
core to onesided's progress thread (on a 2-core machine a target spinning in
MPI starves that thread). Each figure is the median over ``reps`` repetitions of
``iters`` operations, each op followed by a flush (8-byte elements), after a
warm-up. Ratios below 1 mean onesided is faster.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any, Callable

import numpy as np


def _ops(win: Any, mpi_ops: Any, buf: dict[str, np.ndarray]) -> dict[str, Callable[[], None]]:
    o, r, c = buf["origin"], buf["result"], buf["compare"]
    return {
        "put 8 B": lambda: win.Put(o, 1),
        "get 8 B": lambda: win.Get(r, 1),
        "accumulate SUM int64": lambda: win.Accumulate(o, 1, op=mpi_ops.SUM),
        "get_accumulate SUM int64": lambda: win.Get_accumulate(o, r, 1, op=mpi_ops.SUM),
        "fetch_and_op SUM int64": lambda: win.Fetch_and_op(o, r, 1, 0, op=mpi_ops.SUM),
        "compare_and_swap int64": lambda: win.Compare_and_swap(o, c, r, 1, 0),
    }


def _measure(win: Any, op: Callable[[], None], iters: int, reps: int) -> float:
    """Median microseconds per (op + Flush(1)) at the origin."""
    flush = win.Flush
    for _ in range(max(10, iters // 10)):
        op()
        flush(1)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(iters):
            op()
            flush(1)
        times.append((time.perf_counter() - t0) / iters * 1e6)
    return statistics.median(times)


NATIVE_INFO = {
    "accumulate_ops": "fetch_and_op:sum,compare_and_swap,accumulate:sum,rmw:inc,rmw2:comp_swap_lt",
    # tcp;ofi_rxm does not keep atomic write-after-read order
    "accumulate_ordering": "rar,raw,waw",
}


def _atomic_ops(win: Any, onesided: Any, buf: dict[str, np.ndarray]) -> dict[str, Callable[[], None]]:
    o, r, c = buf["origin"], buf["result"], buf["compare"]
    return {
        "fetch_and_op SUM int64": lambda: win.Fetch_and_op(o, r, 1, 0),
        "compare_and_swap int64": lambda: win.Compare_and_swap(o, c, r, 1, 0),
        "accumulate SUM int64": lambda: win.Accumulate(o, 1),
        "rmw INC int64": lambda: win.Rmw(None, r, 1, 0, onesided.RMW_INC),
        "rmw2 COMP_SWAP_LT int64": lambda: win.Rmw2(c, o, r, 1, 0, onesided.RMW2_COMP_SWAP_LT),
    }


def _paths_table(comm: Any, onesided: Any, buf: dict[str, np.ndarray], iters: int, reps: int) -> None:
    """Native against software atomics, on shm and tcp, in one run."""
    columns = []
    for provider in ("shm", "tcp;ofi_rxm"):
        for path, extra in (("native", NATIVE_INFO), ("software", {"onesided_atomics": "software"})):
            win = onesided.Window.Allocate(64, disp_unit=8, info={"provider": provider, **extra}, comm=comm)
            actual = "native" if win.atomics["sum", "int64"].native else "software"
            figures = {}
            for name in _atomic_ops(win, onesided, buf):
                comm.Barrier()
                if comm.rank == 0:
                    win.Lock_all()
                    figures[name] = _measure(win, _atomic_ops(win, onesided, buf)[name], iters, reps)
                    win.Unlock_all()
                _idle_barrier(comm)
            columns.append((f"{provider.split(';')[0]} {actual}", figures))
            win.Free()
    if comm.rank == 0:
        print(f"\natomics by path (op + flush, us, median of {reps} x {iters})\n")
        print("| operation | " + " | ".join(c for c, _ in columns) + " |")
        print("|---|" + "---|" * len(columns))
        for name in _atomic_ops(None, onesided, buf):
            print(f"| {name} | " + " | ".join(f"{f[name]:.2f}" for _, f in columns) + " |")


def _idle_barrier(comm: Any) -> None:
    """A barrier that leaves the CPU to progress threads while it waits."""
    request = comm.Ibarrier()
    while not request.Test():
        time.sleep(0.0002)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m onesided.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--iters", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="fewer iterations (the demo)")
    args = parser.parse_args(argv)
    if args.quick:
        args.iters, args.reps = 500, 3

    from mpi4py import MPI

    import onesided

    comm = MPI.COMM_WORLD
    if comm.size != 2:
        if comm.rank == 0:
            print("run on exactly 2 ranks: mpiexec -n 2 python -m onesided.bench")
        return 2
    buf = {
        "origin": np.ones(1, dtype=np.int64),
        "result": np.zeros(1, dtype=np.int64),
        "compare": np.zeros(1, dtype=np.int64),
    }
    ours = onesided.Window.Allocate(64, disp_unit=8, comm=comm)
    theirs = MPI.Win.Allocate(64, disp_unit=8, comm=comm)
    rows = []
    for name in _ops(ours, onesided, buf):
        figures = []
        for win, ops in ((ours, onesided), (theirs, MPI)):
            comm.Barrier()
            if comm.rank == 0:
                win.Lock_all()
                figures.append(_measure(win, _ops(win, ops, buf)[name], args.iters, args.reps))
                win.Unlock_all()
            if ops is onesided:
                _idle_barrier(comm)
            else:
                comm.Barrier()
        if comm.rank == 0:
            rows.append((name, *figures))
    if comm.rank == 0:
        version = MPI.Get_library_version().splitlines()[0].strip()
        print(f"\nlatency, 2 ranks on one host, op + flush, median of {args.reps} x {args.iters}")
        print(f"onesided provider: {ours.provider}; peer: mpi4py MPI.Win.Allocate on {version}\n")
        print(f"| {'operation':26s} | {'onesided':>10s} | {'MPI.Win':>10s} | {'ratio':>6s} |")
        print(f"|{'-' * 28}|{'-' * 12}|{'-' * 12}|{'-' * 8}|")
        for name, a, b in rows:
            print(f"| {name:26s} | {a:8.2f} us | {b:8.2f} us | {a / b:6.2f} |")
    ours.Free()
    theirs.Free()
    if not args.quick:
        _paths_table(comm, onesided, buf, args.iters // 2, args.reps)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
