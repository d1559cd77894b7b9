"""Where a later window's creation goes, on every rank of an MPI job.

    mpiexec.mpich -n 2 .venv/bin/python tools/creation_profile.py Create_dynamic 1000
    mpiexec.mpich -n 2 .venv/bin/python tools/creation_profile.py Allocate 1000 --profile 0

Makes and frees N windows of KIND over MPI.COMM_WORLD after a first one,
the ranks leaving an MPI barrier together before each. Prints the slowest
rank's median time per window + Free, each rank's CPU time per thread over
the loop (from /proc/self/task: which threads held a core), and with
--profile R, rank R's cProfile of the loop (the polled waits against
_make, whose own time includes the core's creation). docs/performance.md,
"Window creation", quotes it.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import time

import numpy as np
from mpi4py import MPI

import onesided

KINDS = ("Allocate", "Create", "Allocate_shared", "Create_dynamic")


def thread_ticks() -> dict[str, tuple[str, int]]:
    """CPU ticks (user + system) of each thread of this process, by tid."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            stat = open(f"/proc/self/task/{tid}/stat").read()
        except OSError:
            continue  # ended meanwhile
        fields = stat[stat.rindex(")") + 2 :].split()
        out[tid] = (stat[stat.index("(") + 1 : stat.rindex(")")], int(fields[11]) + int(fields[12]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=KINDS)
    parser.add_argument("windows", type=int)
    parser.add_argument("--profile", type=int, default=None, metavar="RANK")
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    memory = np.zeros(8, np.int64)
    make = {
        "Allocate": lambda: onesided.Window.Allocate(64, 8, comm=comm),
        "Create": lambda: onesided.Window.Create(memory, 8, comm=comm),
        "Allocate_shared": lambda: onesided.Window.Allocate_shared(64, 8, comm=comm),
        "Create_dynamic": lambda: onesided.Window.Create_dynamic(comm=comm),
    }[args.kind]
    make().Free()  # the job's first window is another question
    profiler = cProfile.Profile() if args.profile == comm.rank else None
    before = thread_ticks()
    seconds = []
    for _ in range(args.windows):
        comm.Barrier()
        if profiler:
            profiler.enable()
        t0 = time.perf_counter()
        make().Free()
        seconds.append(time.perf_counter() - t0)
        if profiler:
            profiler.disable()
    after = thread_ticks()
    slowest = np.maximum.reduce(comm.allgather(np.array(seconds)))
    used = sorted(((name, ticks - before.get(tid, (name, 0))[1]) for tid, (name, ticks) in after.items()),
                  key=lambda t: -t[1])
    lines = [f"rank {comm.rank}: CPU ticks per thread over the loop: {used}"]
    if profiler:
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(12)
        lines.append(text.getvalue())
    gathered = comm.gather(lines)
    if comm.rank == 0:
        for rank_lines in gathered:
            print("\n".join(rank_lines))
        print(f"{args.kind} + Free, slowest rank, median of {args.windows}: {np.median(slowest) * 1e6:.1f} us "
              f"[{slowest.min() * 1e6:.1f}, {slowest.max() * 1e6:.1f}]")


if __name__ == "__main__":
    main()
