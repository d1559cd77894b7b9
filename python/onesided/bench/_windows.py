"""Figure 6: many windows, each used lightly. What a window costs when a job
holds a hundred of them: the time to make and free one, a lock epoch spread
over all of them against the same epochs on one, and what each window holds
in the process (threads, descriptors, /dev/shm files, resident memory).

Four kinds of window, one after another: onesided ``Window.Allocate``,
``MPI.Win.Allocate``, onesided ``Window.Create`` and ``MPI.Win.Create``, the
Create windows over numpy arrays. Each kind's 100 windows are made, used
and freed before the next kind starts, so each kind's resource figures are
differences between snapshots taken around its own windows.

Collective over the whole job (2 ranks or more); rank 0 is the origin,
rank 1 the passive target; results come back on rank 0.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ._common import Progress, Settings, Spread, SummaryRow, fmt_ratio, fmt_us, heading, table
from ._figures import _mpi_create, _on_origin
from ._resources import RESOURCES, JobSnapshot, job_snapshot

WINDOWS = 100
WORDS = 8  # int64 per window: 64 B, a counter and room
KINDS = ("onesided Allocate", "MPI.Win Allocate", "onesided Create", "MPI.Win Create")


@dataclass
class _Kind:
    """How to make one window of a kind; ``make`` returns (window, None) or
    (None, why) when the library cannot make this kind."""

    name: str
    lib: Any
    mpi: bool
    make: Callable[[bool], tuple[Any, str | None]]  # make(first)


def _kinds(comm: Any, MPI: Any, onesided: Any, memory: list[np.ndarray]) -> list[_Kind]:
    """The four kinds; Create windows append the array they expose to
    ``memory``, which must outlive them."""

    def array() -> np.ndarray:
        memory.append(np.zeros(WORDS, np.int64))
        return memory[-1]

    def mpi_create(first: bool) -> tuple[Any, str | None]:
        # Open MPI's osc/sm makes no Create windows: the first attempt says so for the kind.
        return _mpi_create(comm, MPI, array()) if first else (MPI.Win.Create(array(), disp_unit=8, comm=comm), None)

    return [
        _Kind(KINDS[0], onesided, False,
              lambda first: (onesided.Window.Allocate(WORDS * 8, disp_unit=8, comm=comm), None)),
        _Kind(KINDS[1], MPI, True, lambda first: (MPI.Win.Allocate(WORDS * 8, disp_unit=8, comm=comm), None)),
        _Kind(KINDS[2], onesided, False,
              lambda first: (onesided.Window.Create(array(), disp_unit=8, comm=comm), None)),
        _Kind(KINDS[3], MPI, True, mpi_create),
    ]


def _epochs_us(wins: list[Any], lib: Any, rounds: int) -> float:
    """Microseconds per Lock(1) + fetch_and_op SUM + Unlock(1), going through
    ``wins`` in order ``rounds`` times (after one warm-up pass)."""
    o, r = np.ones(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    clock = time.perf_counter

    def run(n: int) -> None:
        for _ in range(n):
            for win in wins:
                win.Lock(1)
                win.Fetch_and_op(o, r, 1, 0, lib.SUM)
                win.Unlock(1)

    run(1)
    t0 = clock()
    run(rounds)
    return (clock() - t0) / (rounds * len(wins)) * 1e6


def _counters(comm: Any, wins: list[Any], lib: Any) -> int | None:
    """The sum of every window's counter at rank 1, read by rank 0 (None elsewhere)."""
    total = 0
    value = np.zeros(1, dtype=np.int64)
    if comm.rank == 0:
        for win in wins:
            win.Lock(1, lib.LOCK_SHARED)
            win.Get(value, 1)
            win.Unlock(1)
            total += int(value[0])
    comm.Barrier()
    return total if comm.rank == 0 else None


def _timed_each(calls: list[Callable[[], Any]]) -> tuple[list[Any], list[float]]:
    """Each call's result and its time in microseconds."""
    results, times = [], []
    for call in calls:
        t0 = time.perf_counter()
        results.append(call())
        times.append((time.perf_counter() - t0) * 1e6)
    return results, times


def _epoch_samples(comm: Any, kind: _Kind, wins: list[Any], reps: int, rounds: int) -> tuple[list[float], list[float]]:
    """Rank 0's us per epoch over all of ``wins`` in turn and on the first
    alone, ``reps`` of each, the two taking turns (empty lists elsewhere)."""
    spread: list[float] = []
    single: list[float] = []
    for _ in range(reps):
        for out, shape in ((spread, wins), (single, [wins[0]] * len(wins))):
            value = _on_origin(comm, kind.mpi, lambda shape=shape: _epochs_us(shape, kind.lib, rounds))
            if comm.rank == 0:
                out.append(value)
    return spread, single


def _one_kind(comm: Any, kind: _Kind, s: Settings, rounds: int, progress: Progress) -> dict[str, Any] | None:
    """Make, use and free WINDOWS windows of ``kind``; rank 0 gets the figures
    (None elsewhere), or {"skipped": why} where the library makes no such window."""
    gc.collect()
    before = job_snapshot(comm)
    t0 = time.perf_counter()
    first, why = kind.make(True)
    create = [(time.perf_counter() - t0) * 1e6]
    if first is None:
        return {"skipped": why} if comm.rank == 0 else None
    with_one = job_snapshot(comm)
    comm.Barrier()
    rest, times = _timed_each([lambda: kind.make(False)[0]] * (WINDOWS - 1))
    wins = [first, *rest]
    create += times
    with_all = job_snapshot(comm)

    progress(f"many windows: {kind.name}, lock epochs")
    spread, single = _epoch_samples(comm, kind, wins, s.reps, rounds)
    counted = _counters(comm, wins, kind.lib)
    issued = s.reps * (rounds + 1) * WINDOWS * 2  # both shapes, warm-up passes included

    comm.Barrier()
    _, free = _timed_each([win.Free for win in wins])
    freed = job_snapshot(comm)
    del wins, rest, first
    gc.collect()  # a freed window's object may sit in a reference cycle until the collector runs
    collected = job_snapshot(comm)
    if comm.rank != 0:
        return None
    assert before and with_one and with_all and freed and collected
    return {
        "create": Spread.of(create), "free": Spread.of(free),
        "spread": Spread.of(spread), "single": Spread.of(single),
        "counted": counted, "issued": issued,
        "before": before, "first": with_one.minus(before),
        "each": {k: v / (WINDOWS - 1) for k, v in with_all.minus(with_one).items()},
        "freed": freed.minus(before), "collected": collected.minus(before),
    }


def many_windows(comm: Any, MPI: Any, onesided: Any, s: Settings, progress: Progress) -> dict[str, Any] | None:
    """Figure 6 over ``comm`` (at least 2 ranks): each kind in turn; rank 0
    gets {"kinds": {name: figures}, "ranks", "rounds"}, the other ranks None."""
    rounds = 2 if s.quick else 10
    memory: list[np.ndarray] = []
    out: dict[str, Any] = {}
    for kind in _kinds(comm, MPI, onesided, memory):
        progress(f"many windows: {kind.name}, {WINDOWS} windows")
        out[kind.name] = _one_kind(comm, kind, s, rounds, progress)
        memory.clear()  # the kind's windows are freed
    if comm.rank != 0:
        return None
    return {"kinds": out, "ranks": comm.size, "rounds": rounds}


def _measured(res: dict[str, Any], name: str) -> dict[str, Any] | None:
    f = res["kinds"][name]
    return None if "skipped" in f else f


def many_windows_text(res: dict[str, Any], s: Settings, peer: str) -> str:
    """Tables 6a (time) and 6b (what the windows hold)."""
    return _time_text(res, s, peer) + "\n\n" + _resources_text(res)


def _time_text(res: dict[str, Any], s: Settings, peer: str) -> str:
    a, ma, c, mc = (_measured(res, k) for k in KINDS)

    def row(label: str, key: str) -> list[str]:
        cells = [label]
        for ours, theirs in ((a, ma), (c, mc)):
            x, y = (f and f[key] for f in (ours, theirs))
            cells += [fmt_us(x), fmt_us(y), fmt_ratio(x, y)]
        return cells

    def slowdown(f: dict[str, Any] | None) -> str:
        return fmt_ratio(f and f["spread"], f and f["single"])

    def check(f: dict[str, Any] | None) -> str:
        if f is None:
            return "n/a"
        return f"{'ok' if f['counted'] == f['issued'] else 'MISMATCH'} ({f['counted']} of {f['issued']})"

    rows = [
        row("create, us per window", "create"),
        row("Free, us per window", "free"),
        row(f"Lock + fetch_and_op + Unlock, {WINDOWS} windows in turn", "spread"),
        row("Lock + fetch_and_op + Unlock, 1 window", "single"),
        [f"{WINDOWS} windows / 1 window", slowdown(a), slowdown(ma), "", slowdown(c), slowdown(mc), ""],
        ["final counters", check(a), check(ma), "", check(c), check(mc), ""],
    ]
    skipped = [f"{k}: n/a, {res['kinds'][k]['skipped']}." for k in KINDS if _measured(res, k) is None]
    head = heading(
        f"6a. Many windows: {WINDOWS} windows of {WORDS * 8} B on {res['ranks']} ranks, each used lightly",
        f"Each kind in turn: {WINDOWS} windows made one after another, used, then freed, before the next kind "
        "starts. create and Free: us per call on rank 0, median [min, max] over the "
        f"{WINDOWS} calls (collective calls: the time includes waiting for the other ranks). Lock epochs: rank 0 "
        f"locks rank 1, fetch_and_op SUM int64, unlocks; {res['rounds']} passes over the {WINDOWS} windows in "
        f"turn, against the same number of epochs on one of them; us per epoch, median [min, max] of {s.reps} "
        "repetitions, the two taking turns. The kinds do not take turns: a slow spell of the machine can hit "
        "one column alone. onesided with default settings; peer: mpi4py MPI.Win.Allocate / MPI.Win.Create on "
        f"{peer}. ratio = onesided / MPI.Win (below 1: onesided faster). Every window's counter at rank 1 is "
        "read back: their sum must equal the epochs issued, warm-up included."
        + (" " + " ".join(skipped) if skipped else ""),
    )
    return head + "\n" + table(["figure", "onesided Allocate", "MPI.Win Allocate", "ratio", "onesided Create",
                                "MPI.Win Create", "ratio"], rows)


def _fmt_bytes(n: float, sign: bool = False) -> str:
    text = "-" if n < 0 else ("+" if sign else "")
    n = abs(n)
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{text}{n / scale:.4g} {unit}"
    return f"{text}{n:.4g} B"


def _fmt_count(n: float, sign: bool = False) -> str:
    return (f"{n:+.3g}" if sign else f"{n:.3g}") if n != int(n) else (f"{int(n):+d}" if sign else f"{int(n)}")


RESOURCE_ROWS = {
    "threads": ("threads of rank 0's process", _fmt_count),
    "fds": ("open file descriptors of rank 0's process", _fmt_count),
    "rss": ("resident memory of rank 0's process", _fmt_bytes),
    "shm_entries": ("/dev/shm files the job maps or holds open", _fmt_count),
    "shm_bytes": ("their size", _fmt_bytes),
    "shm_allocated": ("their memory (tmpfs blocks)", _fmt_bytes),
}


def _resources_text(res: dict[str, Any]) -> str:
    assert tuple(RESOURCE_ROWS) == RESOURCES

    def cell(f: dict[str, Any] | None, key: str, fmt: Callable[..., str]) -> str:
        if f is None:
            return "n/a"
        before: JobSnapshot = f["before"]
        return (f"{fmt(getattr(before, key))}: {fmt(f['first'][key], True)} / {fmt(f['each'][key], True)} / "
                f"{fmt(f['freed'][key], True)} / {fmt(f['collected'][key], True)}")

    rows = [[label, *(cell(_measured(res, k), key, fmt) for k in KINDS)] for key, (label, fmt) in RESOURCE_ROWS.items()]
    head = heading(
        f"6b. Many windows: what the windows hold ({res['ranks']} ranks)",
        "Each cell: `before: first / each / freed / collected`. before: the count before the kind's first "
        "window; first: what the first window added; each: what each further window added on average "
        f"(windows 2 to {WINDOWS}); freed: what is left, against before, once all {WINDOWS} are freed (their "
        "objects still referenced); collected: what is left once the objects are dropped and gc.collect() has "
        "run. Read from /proc/self (task, fd, statm, maps, map_files): everything the process holds, MPI "
        "library and libfabric included; /dev/shm files are counted once however many ranks map them, and "
        "unlinked ones count while mapped or open.",
    )
    return head + "\n" + table(["resource", *KINDS], rows)


def many_windows_ok(res: dict[str, Any]) -> bool:
    """Every measured kind's counters add up to the epochs issued."""
    return all(f["counted"] == f["issued"] for f in (_measured(res, k) for k in KINDS) if f is not None)


def many_windows_summary(res: dict[str, Any]) -> list[SummaryRow]:
    """Table 6a's time rows, onesided beside MPI.Win, for the table across peers."""
    rows: list[SummaryRow] = []
    for kind in ("Allocate", "Create"):
        ours, theirs = _measured(res, f"onesided {kind}"), _measured(res, f"MPI.Win {kind}")
        for key, label in (("create", f"create, {kind}"), ("free", f"Free, {kind}"),
                           ("spread", f"Lock + fetch_and_op + Unlock, {WINDOWS} {kind} windows in turn"),
                           ("single", f"Lock + fetch_and_op + Unlock, 1 {kind} window")):
            rows.append((label, "us", ours and ours[key], theirs and theirs[key], False))
    return rows
