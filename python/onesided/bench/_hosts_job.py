"""One job of the scale-across-hosts bench (``hosts.py``): what a window
costs each rank as the job grows, for onesided and, in a job that mpi4py
started, MPI.Win beside it.

    python -m onesided.bench.hosts job --json OUT.json --label LABEL [--libs onesided,mpi]

Collective over COMM_WORLD (the launcher's, or mpi4py's under mpiexec and
srun); rank 0 writes OUT.json. Per library, in this order:

* first window: ``Allocate`` of 8 bytes, the first window of the job (what
  the library sets up once: endpoints, connections, peer tables), then its
  ``Free``;
* later windows: ``Allocate`` + ``Free`` again, ``reps`` times;
* Fence: consecutive Fences on one window, per call;
* counter: ``Lock_all``, every rank ``Fetch_and_op`` SUM on rank 0's int64
  with ``Flush(0)`` after each for ``seconds``, from a common start; the
  final counter is checked against every op issued;
* resources: each rank's resident memory, descriptors and sockets with one
  window open, and their growth over the same rank before its first window.

Each time is the slowest rank's (a collective call ends for the job when
its last rank leaves it); each repeated figure is the median over the
repetitions. Ranks are timed between barriers, so no rank's time includes
waiting for another to arrive.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from typing import Any

import numpy as np

__all__ = ["run_job"]

FIGURES = {
    # key: (title, unit, lower is better)
    "create_first": ("first window: Allocate", "ms", True),
    "free_first": ("first window: Free", "ms", True),
    "create": ("later windows: Allocate", "ms", True),
    "free": ("later windows: Free", "ms", True),
    "fence": ("Fence", "us", True),
    "counter": ("Lock_all + Fetch_and_op + Flush, ops/s total", "ops/s", False),
    "rss": ("resident memory per rank (median rank)", "MiB", True),
    "rss_growth": ("resident memory growth per rank over its first window", "MiB", True),
    "fds": ("descriptors per rank (median rank)", "", True),
    "sockets": ("sockets per rank (median rank)", "", True),
    "sockets_growth": ("sockets per rank opened by the library's RMA", "", True),
}


def _process() -> dict[str, float]:
    """This process now: resident MiB, open descriptors, and those of them
    that are sockets (connections, listeners, the launcher's channel)."""
    with open("/proc/self/statm") as statm:
        rss = int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    fds = sockets = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        fds += 1
        sockets += target.startswith("socket:")
    return {"rss": rss, "fds": fds, "sockets": sockets}


def _slowest(comm: Any, seconds: float) -> float:
    return max(comm.allgather(seconds))


def _timed(comm: Any, fn: Any) -> tuple[Any, float]:
    """``fn()`` between barriers; the slowest rank's seconds."""
    comm.Barrier()
    t0 = time.perf_counter()
    out = fn()
    return out, _slowest(comm, time.perf_counter() - t0)


def _library(comm: Any, lib: Any, make: Any, reps: int, seconds: float) -> dict[str, Any]:
    before = _process()
    win, t_create = _timed(comm, make)
    opened = _process()
    _, t_free = _timed(comm, win.Free)
    creates, frees = [], []
    for _ in range(reps):
        win, t = _timed(comm, make)
        creates.append(t)
        _, t = _timed(comm, win.Free)
        frees.append(t)

    win = make()
    win.Fence()
    fences = 50
    _, t_fences = _timed(comm, lambda: [win.Fence() for _ in range(fences)])
    win.Fence()

    one, result = np.ones(1, np.int64), np.zeros(1, np.int64)
    counter = np.zeros(1, np.int64)
    win.Lock_all()
    comm.Barrier()
    n = 0
    t0 = time.perf_counter()
    end = t0 + seconds
    while True:
        win.Fetch_and_op(one, result, 0, 0, lib.SUM)
        win.Flush(0)
        n += 1
        if time.perf_counter() >= end:
            break
    elapsed = time.perf_counter() - t0
    win.Unlock_all()
    comm.Barrier()
    if comm.rank == 0:
        win.Lock(0, lib.LOCK_SHARED)
        win.Get(counter, 0)
        win.Unlock(0)
    ops = comm.allgather((n, elapsed))
    comm.Barrier()
    win.Free()

    per_rank = comm.allgather(opened | {
        "rss_growth": opened["rss"] - before["rss"], "sockets_growth": opened["sockets"] - before["sockets"]})
    median = {k: statistics.median(r[k] for r in per_rank) for k in per_rank[0]}
    issued = sum(k for k, _ in ops)
    return {
        "create_first": t_create * 1e3,
        "free_first": t_free * 1e3,
        "create": statistics.median(creates) * 1e3,
        "free": statistics.median(frees) * 1e3,
        "fence": t_fences / fences * 1e6,
        "counter": issued / max(t for _, t in ops),
        "counter_ok": comm.rank != 0 or int(counter[0]) == issued,
        **median,
    }


def run_job(out: str, label: str, libs: list[str], reps: int = 5, seconds: float = 1.0) -> None:
    """Measure every library of ``libs`` ("onesided", "mpi") over
    COMM_WORLD; rank 0 writes the figures to ``out`` as JSON."""
    import onesided

    comm = onesided.COMM_WORLD
    results: dict[str, Any] = {}
    for name in libs:
        if name == "onesided":
            def make() -> Any:
                return onesided.Window.Allocate(8, disp_unit=8, comm=comm)
            results[name] = _library(comm, onesided, make, reps, seconds)
        else:
            from mpi4py import MPI

            mpi_comm = MPI.COMM_WORLD
            results[name] = _library(mpi_comm, MPI, lambda: MPI.Win.Allocate(8, disp_unit=8, comm=mpi_comm),
                                     reps, seconds)
    hosts = comm.allgather(os.uname().nodename)
    if comm.rank == 0:
        with open(out, "w") as f:
            json.dump({"label": label, "ranks": comm.size, "hosts": len(set(hosts)), "cores": os.cpu_count(),
                       "results": results}, f, indent=1)
