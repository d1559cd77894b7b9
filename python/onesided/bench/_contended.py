"""Figure 4: the contended counter, every rank of the job on rank 0's counter.

Collective over the whole job; results come back on rank 0.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable

import numpy as np

from ._common import Call, Progress, Settings, Spread, SummaryRow, fmt_rate, fmt_ratio, heading, idle_barrier, table
from ._figures import FAST

def _contended_rep(comm: Any, win: Any, call: Call, mpi: bool, seconds: float, warm: float) -> tuple[int, float, int]:
    """Every rank: fetch_and_op SUM 1 on rank 0's counter, Flush(0) after
    each, for ``seconds`` from a common start (after ``warm`` seconds of
    warm-up). Returns (ops timed, seconds, ops issued in all)."""
    barrier: Callable[[], None] = comm.Barrier if mpi else (lambda: idle_barrier(comm))
    fn, args = call
    flush = win.Flush
    clock = time.perf_counter
    win.Lock_all()
    warm_ops = 0
    end = clock() + warm
    while warm > 0:
        fn(*args)
        flush(0)
        warm_ops += 1
        if clock() >= end:
            break
    barrier()
    n = 0
    t0 = clock()
    end = t0 + seconds
    while True:
        fn(*args)
        flush(0)
        n += 1
        if clock() >= end:
            break
    elapsed = clock() - t0
    win.Unlock_all()
    barrier()  # rank 0, the target, waits here (for MPI.Win: progressing) until every rank is done
    return n, elapsed, n + warm_ops


def _read_counter(comm: Any, win: Any, lib: Any) -> int | None:
    value = np.zeros(1, dtype=np.int64)
    if comm.rank == 0:
        win.Lock(0, lib.LOCK_SHARED)
        win.Get(value, 0)
        win.Unlock(0)
    return int(value[0]) if comm.rank == 0 else None


def contended(comm: Any, MPI: Any, onesided: Any, s: Settings, progress: Progress) -> dict[str, Any] | None:
    """Counter throughput with every rank of ``comm`` hammering rank 0; the
    libraries take turns within each repetition."""
    o, r = np.ones(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    wins = {
        "onesided": (onesided.Window.Allocate(8, disp_unit=8, info=FAST, comm=comm), onesided, False),
        "mpi": (MPI.Win.Allocate(8, disp_unit=8, comm=comm), MPI, True),
    }
    samples: dict[str, list[tuple[int, float]]] = {key: [] for key in wins}
    issued = {key: 0 for key in wins}
    for rep in range(s.reps):
        progress(f"contended counter on {comm.size} ranks: repetition {rep + 1} of {s.reps}")
        for key, (win, lib, mpi) in wins.items():
            call = (win.Fetch_and_op, (o, r, 0, 0, lib.SUM))
            n, elapsed, all_ops = _contended_rep(comm, win, call, mpi, s.contended_seconds, s.contended_seconds / 10)
            samples[key].append((n, elapsed))
            issued[key] += all_ops
    out: dict[str, dict[str, Any]] = {}
    for key, (win, lib, mpi) in wins.items():
        counter = _read_counter(comm, win, lib)
        every = comm.gather((samples[key], issued[key]), root=0)
        if comm.rank == 0:
            total = [sum(smp[k][0] for smp, _ in every) / max(smp[k][1] for smp, _ in every) for k in range(s.reps)]
            per_rank = [smp[k][0] / smp[k][1] for smp, _ in every for k in range(s.reps)]
            slowest = [min(smp[k][0] / smp[k][1] for smp, _ in every) for k in range(s.reps)]
            out[key] = {
                "total": Spread.of(total),
                "per_rank": Spread.of(per_rank),
                "slowest": Spread.of(slowest),
                "counter": counter,
                "expected": sum(n for _, n in every),
            }
        comm.Barrier()
        win.Free()
    if comm.rank != 0:
        return None
    return {"rows": out, "ranks": comm.size, "cores": os.cpu_count()}


# The throughput rows of table 4, by their key in the result.
SUMMARY_ROWS = {"total": "ops/s total", "per_rank": "ops/s per rank (median)", "slowest": "ops/s per rank (slowest)"}


def contended_ok(res: dict[str, Any]) -> bool:
    return all(f["counter"] == f["expected"] for f in res["rows"].values())


def contended_text(res: dict[str, Any], s: Settings, peer: str = "") -> str:
    f1, f2 = res["rows"]["onesided"], res["rows"]["mpi"]

    def check(f: dict[str, Any]) -> str:
        verdict = "ok" if f["counter"] == f["expected"] else "MISMATCH"
        return f"{verdict} ({f['counter']} of {f['expected']})"

    rows = [[label, fmt_rate(f1[key]), fmt_rate(f2[key]), fmt_ratio(f1[key], f2[key])]
            for key, label in SUMMARY_ROWS.items()]
    rows.append(["final counter", check(f1), check(f2), ""])
    n, cores = res["ranks"], res.get("cores")
    head = heading(
        f"4. Contended counter: {n} ranks, fetch_and_op SUM on rank 0's counter",
        f"Every rank issues fetch_and_op SUM int64 on rank 0's counter, each followed by Flush(0), for "
        f"{s.contended_seconds:g} s from a common start; median [min, max] of {s.reps} repetitions, the libraries taking "
        "turns. Total: every rank's ops over the longest rank's time; per rank: each rank's own rate, the "
        "median rank and the slowest. onesided on the shared-memory path, peer "
        "MPI.Win.Allocate. ratio = onesided / MPI.Win (above 1: onesided faster). The final counter must "
        "equal every op issued, warm-up included.",
        *([oversubscribed(n, cores)] if cores and n > cores else []),
    )
    return head + "\n" + table([f"figure ({n} ranks)", "onesided shared-memory path", "MPI.Win", "ratio"], rows)


def oversubscribed(ranks: int, cores: int) -> str:
    """The note of a job with more ranks than the host has cores."""
    return (f"**Oversubscribed: {ranks} ranks on {cores} cores** ({ranks / cores:.3g} ranks per core). The ranks "
            "take turns on the cores, so every figure includes time a rank spent waiting for one, for both "
            "libraries; the rank holding the counter is not always running.")


def contended_summary(res: dict[str, Any]) -> list[SummaryRow]:
    """The three throughput rows in Mops/s, onesided beside MPI.Win (the
    table across peers, and across rank counts: scale.py)."""
    f1, f2 = res["rows"]["onesided"], res["rows"]["mpi"]
    return [(label, "Mops/s", f1[key].map(lambda x: x / 1e6), f2[key].map(lambda x: x / 1e6), True)
            for key, label in SUMMARY_ROWS.items()]
