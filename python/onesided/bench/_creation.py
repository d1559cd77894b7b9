"""Figure 7: window creation and Free, onesided beside ``MPI.Win`` on the
same communicator in the same job.

What a notebook user waits for: the job's first window (where each library
sets up what it keeps for the job), then windows made and freed one after
another, for the four kinds: Allocate, Create (each over a fresh numpy
array, as mpi4py code makes them), Allocate_shared and Create_dynamic.

Every call is timed from just before it to just after it on every rank,
after a barrier; a figure is the slowest rank's time for that call (the
time the job waits for the collective), then the median [min, max] over the
windows. The libraries take turns window by window, so a slow spell of the
machine hits both.

Collective over the whole job (any size); results come back on rank 0.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from ._common import Progress, Settings, Spread, SummaryRow, fmt_ratio, fmt_us, heading, table

WORDS = 8  # int64 per window: 64 B
KINDS = ("Allocate", "Create", "Allocate_shared", "Create_dynamic")
LIBRARIES = ("onesided", "MPI.Win")
FIRST = "first window of the job (Allocate)"


def _maker(lib: Any, kind: str, comm: Any) -> Callable[[], Any]:
    """A call that makes one window of ``kind`` with ``lib`` (onesided.Window
    or MPI.Win); Create's array is made before the clock starts (it is the
    caller's memory, not the library's work) and kept by the window."""
    if kind == "Allocate":
        return lambda: lib.Allocate(WORDS * 8, disp_unit=8, comm=comm)
    if kind == "Allocate_shared":
        return lambda: lib.Allocate_shared(WORDS * 8, disp_unit=8, comm=comm)
    if kind == "Create_dynamic":
        return lambda: lib.Create_dynamic(comm=comm)
    return lambda: lib.Create(np.zeros(WORDS, np.int64), disp_unit=8, comm=comm)


def _timed(comm: Any, call: Callable[[], Any]) -> tuple[float, Any]:
    """Seconds this rank spent in ``call``, after a barrier, and its result."""
    comm.Barrier()
    t0 = time.perf_counter()
    out = call()
    return time.perf_counter() - t0, out


def _used(win: Any, kind: str) -> None:
    """Proves the window is a real one: this rank's memory is the window's
    (its first word written and read back through the buffer)."""
    if kind == "Create_dynamic":
        return
    view = np.frombuffer(win.tomemory(), np.int64)
    view[0] = 7
    assert view[0] == 7 and view.size == WORDS, "the window's memory is not the size asked for"


def creation(comm: Any, MPI: Any, onesided: Any, s: Settings, progress: Progress) -> dict[str, Any] | None:
    """The job's first window of each library (Allocate), then for each kind
    ``1 + windows`` windows per library, taking turns; every call's time on
    every rank is gathered, and rank 0 keeps the slowest rank's per call.
    Must run before any other window of the job is made."""
    windows = 5 if s.quick else 20
    libs = {"onesided": onesided.Window, "MPI.Win": MPI.Win}
    mine: dict[str, list[float]] = {}
    skipped: dict[str, str] = {}

    def record(key: str, seconds: float) -> None:
        mine.setdefault(key, []).append(seconds)

    progress("creation: the first window of the job")
    for name in LIBRARIES:
        t, win = _timed(comm, _maker(libs[name], "Allocate", comm))
        record(f"{name} first", t)
        _used(win, "Allocate")
        t, _ = _timed(comm, win.Free)
        record(f"{name} first Free", t)
    for kind in KINDS:
        progress(f"creation: {kind}, {windows} windows after a first, the libraries taking turns")
        for i in range(1 + windows):
            for name in LIBRARIES:
                if f"{name} {kind}" in skipped:
                    continue
                try:
                    t, win = _timed(comm, _maker(libs[name], kind, comm))
                    failed = None
                except Exception as e:  # a peer without this kind (Open MPI's osc/sm makes no Create windows)
                    failed, win = f"{type(e).__name__}: {e}", None
                # Every rank learns whether every rank made it: a window made on
                # some ranks only cannot be freed (Free is collective).
                if not all(comm.allgather(failed is None)):
                    skipped[f"{name} {kind}"] = failed or "it failed on another rank"
                    continue
                _used(win, kind)
                record(f"{name} {kind} {'first' if i == 0 else 'create'}", t)
                t, _ = _timed(comm, win.Free)
                record(f"{name} {kind} {'first Free' if i == 0 else 'Free'}", t)
    every = comm.gather(mine, root=0)
    skipped_any = comm.gather(skipped, root=0)
    if comm.rank != 0:
        return None
    slowest: dict[str, Spread] = {}
    for key, first in every[0].items():
        per_call = np.max(np.array([ranks[key] for ranks in every]), axis=0) * 1e6
        slowest[key] = Spread.of(per_call.tolist())
    why: dict[str, str] = {}
    for d in skipped_any:
        for k, v in d.items():
            why.setdefault(k, v)
    return {"ranks": comm.size, "windows": windows, "us": slowest, "skipped": why, "cores": _cores()}


def _cores() -> int | None:
    import os

    return os.cpu_count()


def _rows() -> list[tuple[str, str]]:
    """(row name, key after the library's name): the figure's rows."""
    rows = [(FIRST, "first"), ("Free of the first window", "first Free")]
    for kind in KINDS:
        rows += [(f"{kind}: first of its kind", f"{kind} first"), (f"{kind}: later windows", f"{kind} create"),
                 (f"{kind}: Free", f"{kind} Free")]
    return rows


def creation_text(res: dict[str, Any], s: Settings, peer: str = "") -> str:
    us = res["us"]
    rows = []
    for label, key in _rows():
        ours, theirs = us.get(f"onesided {key}"), us.get(f"MPI.Win {key}")
        rows.append([label, fmt_us(ours), fmt_us(theirs), fmt_ratio(ours, theirs)])
    skipped = [f"{k}: n/a, {v}." for k, v in res["skipped"].items()]
    cores = res.get("cores")
    over = (f" Oversubscribed: {res['ranks']} ranks on {cores} cores, the ranks take turns on them."
            if cores and res["ranks"] > cores else "")
    head = heading(
        f"7. Window creation and Free on {res['ranks']} ranks, windows of {WORDS * 8} B",
        "Each call timed on every rank from just before it to just after it, after a barrier; each figure is "
        "the slowest rank's time for the call (what the job waits for), in us. The first window of the job: one "
        "Allocate per library, before any other window of the job, median [min, max] of that one call (so the "
        "three agree). Then per kind, a first window of that kind, then "
        f"{res['windows']} more (later windows, Free: median [min, max] over the {res['windows']}), the "
        "libraries taking turns window by window; every Create is over a fresh numpy array, made before the "
        f"clock starts. onesided with default settings; peer: mpi4py MPI.Win on {peer}, same communicator. "
        "ratio = onesided / MPI.Win (below 1: onesided faster)." + over + (" " + " ".join(skipped) if skipped else ""),
    )
    return head + "\n" + table(["call", "onesided", "MPI.Win", "ratio"], rows)


def creation_ok(res: dict[str, Any]) -> bool:
    """Every onesided kind was measured (onesided makes every kind)."""
    return all(f"onesided {kind} create" in res["us"] for kind in KINDS)


def creation_summary(res: dict[str, Any]) -> list[SummaryRow]:
    """Every row, onesided beside MPI.Win, for the table across rank counts."""
    us = res["us"]
    return [(label, "us", us.get(f"onesided {key}"), us.get(f"MPI.Win {key}"), False) for label, key in _rows()]
