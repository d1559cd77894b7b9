"""Figures 1 to 3 (latency, lock epochs, bandwidth, message rate): each measured
for onesided and for mpi4py's MPI.Win in the same run.

Every function is collective over ``comm``; results come back on rank 0
(other ranks get None). On 2-rank figures rank 0 is the origin and rank 1
the passive target.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from ._common import (
    Call,
    Progress,
    RovingBuffer,
    Settings,
    Spread,
    SummaryRow,
    batch_seconds,
    fmt_num,
    fmt_rate,
    fmt_ratio,
    fmt_size,
    fmt_us,
    heading,
    idle_barrier,
    latency_us,
    table,
)
# The peer's detection lives in _peer.py; the figures and their callers use it from here.
from ._peer import (  # noqa: F401
    OMPI_ISSUE,
    mpi_cas_ok,
    mpi_peer,
    mpi_version,
    ompi_note,
    ompi_osc,
    open_mpi_41,
    osc_sm_selected,
)

FAST = {"onesided_shared_memory": "on"}
SHM = {"onesided_shared_memory": "off", "provider": "shm"}

def _on_origin(comm: Any, mpi: bool, fn: Callable[[], Any]) -> Any:
    """Run ``fn`` on rank 0 while rank 1 is the passive target: for MPI.Win
    it waits inside MPI_Barrier (MPICH progresses passive-target RMA only
    inside MPI calls), for onesided it naps while testing an Ibarrier."""
    comm.Barrier()
    result = fn() if comm.rank == 0 else None
    if mpi:
        comm.Barrier()
    else:
        idle_barrier(comm)
    return result


Entry = tuple[str, Any, bool, Call]  # key, window (None: a reference such as memcpy), is MPI.Win, call


def _interleaved(comm: Any, entries: list[Entry] | Callable[[int], list[Entry]], reps: int,
                 measure: Callable[[Call, Any], float]) -> dict[str, Spread]:
    """Median, min and max (a Spread) over ``reps`` of ``measure(call, win)`` for each entry
    (key, window, is MPI.Win, call), the entries taking turns within each
    repetition so that a slow spell of the machine hits them alike.
    ``entries`` may be a function of the repetition's index, for calls whose
    buffers move between repetitions (RovingBuffer); its keys must not
    change. Each measurement runs inside Lock_all at rank 0 (an entry
    without a window, outside any epoch); medians come back on rank 0."""
    entries_at = entries if callable(entries) else (lambda rep: entries)
    samples: dict[str, list[float]] = {key: [] for key, _, _, _ in entries_at(0)}
    for rep in range(reps):
        for key, win, mpi, call in entries_at(rep):

            def run(win: Any = win, call: Call = call) -> float:
                if win is None:  # a reference without a window (memcpy): no epoch
                    return measure(call, None)
                win.Lock_all()
                try:
                    return measure(call, win)
                finally:
                    win.Unlock_all()

            value = _on_origin(comm, mpi, run)
            if comm.rank == 0:
                samples[key].append(value)
    return {key: Spread.of(v) for key, v in samples.items()} if comm.rank == 0 else {}


def _buffers() -> dict[str, np.ndarray]:
    return {
        "o": np.ones(1, dtype=np.int64),
        "r": np.zeros(1, dtype=np.int64),
        "c": np.zeros(1, dtype=np.int64),
    }


# -- 1. latency ---------------------------------------------------------------

LATENCY_ROWS = [
    "put 8 B",
    "get 8 B",
    "accumulate SUM int64",
    "get_accumulate SUM int64",
    "fetch_and_op SUM int64",
    "compare_and_swap int64",
    "rmw INC int64",
    "rmw2 COMP_SWAP_LT int64",
]


def latency_calls(win: Any, lib: Any, b: dict[str, np.ndarray], onesided: bool) -> dict[str, Call | None]:
    """Each row's call on ``win`` (None: the library has no such operation)."""
    o, r, c = b["o"], b["r"], b["c"]
    calls: dict[str, Call | None] = {
        "put 8 B": (win.Put, (o, 1)),
        "get 8 B": (win.Get, (r, 1)),
        "accumulate SUM int64": (win.Accumulate, (o, 1, None, lib.SUM)),
        "get_accumulate SUM int64": (win.Get_accumulate, (o, r, 1, None, lib.SUM)),
        "fetch_and_op SUM int64": (win.Fetch_and_op, (o, r, 1, 0, lib.SUM)),
        "compare_and_swap int64": (win.Compare_and_swap, (o, c, r, 1, 0)),
        "rmw INC int64": None,
        "rmw2 COMP_SWAP_LT int64": None,
    }
    if onesided:
        calls["rmw INC int64"] = (win.Rmw, (None, r, 1, 0, lib.RMW_INC))
        calls["rmw2 COMP_SWAP_LT int64"] = (win.Rmw2, (c, o, r, 1, 0, lib.RMW2_COMP_SWAP_LT))
    return calls


def latency(comm: Any, MPI: Any, onesided: Any, s: Settings, progress: Progress) -> dict[str, Any] | None:
    """8-byte op + Flush latency: onesided shared-memory path, onesided over libfabric
    shm (shared-memory path off), MPI.Win.Allocate."""
    b = _buffers()
    wins = {
        "shared": (onesided.Window.Allocate(64, disp_unit=8, info=FAST, comm=comm), onesided, False),
        "shm": (onesided.Window.Allocate(64, disp_unit=8, info=SHM, comm=comm), onesided, False),
        "mpi": (MPI.Win.Allocate(64, disp_unit=8, comm=comm), MPI, True),
    }
    path_name = wins["shared"][0].Get_info()["onesided_path"]
    shm_provider = wins["shm"][0].provider
    cas_ok = mpi_cas_ok(MPI)
    figures: dict[str, dict[str, float | None]] = {}
    for name in LATENCY_ROWS:
        progress(f"latency: {name}")
        entries = []
        for column, (win, lib, mpi) in wins.items():
            call = latency_calls(win, lib, b, not mpi)[name]
            if call is not None and not (mpi and name.startswith("compare_and_swap") and not cas_ok):
                entries.append((column, win, mpi, call))
        got = _interleaved(comm, entries, s.reps,
                           lambda call, win: latency_us(call, win.Flush, 1, s.iters))
        figures[name] = {column: got.get(column) for column in wins}
    for win, _, _ in wins.values():
        win.Free()
    if comm.rank != 0:
        return None
    return {"rows": figures, "path_name": path_name, "shm_provider": shm_provider}


def latency_text(res: dict[str, Any], s: Settings, peer: str) -> str:
    us = fmt_us
    rows = [[name, us(f["shared"]), us(f["shm"]), us(f["mpi"]), fmt_ratio(f["shared"], f["mpi"])]
            for name, f in res["rows"].items()]
    head = heading(
        "1. Latency: 8 B op + Flush, 2 ranks on one host",
        f"us per op + Flush: median [min, max] of {s.reps} repetitions of {s.iters}, each after a warm-up, the three "
        "columns taking turns. onesided shared-memory path: "
        f"`onesided_path={res['path_name']}`; libfabric: `onesided_shared_memory=off`, provider "
        f"`{res['shm_provider']}`. Peer: mpi4py `MPI.Win.Allocate` on {peer}. ratio = shared-memory path / MPI.Win "
        "(below 1: onesided faster).",
    )
    return head + "\n" + table(
        ["operation", "onesided shared-memory path", "onesided libfabric shm", "MPI.Win", "ratio shm path/MPI"], rows)


# -- 1b. lock epochs -----------------------------------------------------------

EPOCH_ROWS = ["put 8 B", "fetch_and_op SUM int64"]
# onesided and MPI.Win side by side: Allocate, Create over np.zeros, Create
# over each library's Alloc_mem memory.
EPOCH_COLUMNS = ("alloc", "mpi_alloc", "create", "mpi_create", "create_am", "mpi_create_am")


def _epoch_us(win: Any, call: Call, iters: int) -> float:
    """Microseconds per Lock(1) + op + Unlock(1), after a warm-up."""
    fn, args = call
    for _ in range(max(10, iters // 10)):
        win.Lock(1)
        fn(*args)
        win.Unlock(1)
    t0 = time.perf_counter()
    for _ in range(iters):
        win.Lock(1)
        fn(*args)
        win.Unlock(1)
    return (time.perf_counter() - t0) / iters * 1e6


def _mpi_create(comm: Any, MPI: Any, memory: np.ndarray) -> tuple[Any, str | None]:
    """MPI.Win.Create over ``memory``, or (None, why) where the MPI cannot
    make one: Open MPI's osc/sm, selected alone (as this benchmark asks under
    Open MPI 4.1), makes only Allocate and Allocate_shared windows."""
    try:
        win, why = MPI.Win.Create(memory, disp_unit=8, comm=comm), None
    except MPI.Exception as e:
        win, why = None, e.Get_error_string()
    # Every rank fails alike (the component is chosen the same way on each);
    # should they not, the ranks that made one keep it: freeing it is collective.
    if not comm.allreduce(win is not None, op=MPI.LAND):
        if why is None:
            why = "MPI_Win_create failed on another rank"
        if osc_sm_selected() and open_mpi_41(MPI):
            why = f"Open MPI's osc/sm makes only Allocate and Allocate_shared windows ({why})"
        return None, why
    return win, None


def epoch_latency(comm: Any, MPI: Any, onesided: Any, s: Settings, progress: Progress) -> dict[str, Any] | None:
    """Lock + 8-byte op + Unlock, the usual shape of ported mpi4py code, on
    windows made by Allocate and by Create over user memory, for onesided
    (default settings) and MPI.Win, the four columns taking turns."""
    b = _buffers()
    mem = {key: np.zeros(8, np.int64) for key in ("onesided", "mpi")}
    wins = {
        "alloc": (onesided.Window.Allocate(64, disp_unit=8, comm=comm), onesided, False),
        "mpi_alloc": (MPI.Win.Allocate(64, disp_unit=8, comm=comm), MPI, True),
        "create": (onesided.Window.Create(mem["onesided"], disp_unit=8, comm=comm), onesided, False),
    }
    mpi_create, no_create = _mpi_create(comm, MPI, mem["mpi"])
    if mpi_create is not None:
        wins["mpi_create"] = (mpi_create, MPI, True)
    # Create over Alloc_mem memory, each library's own: onesided's takes the
    # shared-memory path, MPI's whatever its Win_create does with it.
    blocks = {"onesided": onesided.Alloc_mem(64), "mpi": MPI.Alloc_mem(64)}
    wins["create_am"] = (onesided.Window.Create(np.frombuffer(blocks["onesided"], np.int64), disp_unit=8, comm=comm),
                         onesided, False)
    mpi_create_am, _ = _mpi_create(comm, MPI, np.frombuffer(blocks["mpi"], np.int64))
    if mpi_create_am is not None:
        wins["mpi_create_am"] = (mpi_create_am, MPI, True)
    info = wins["create"][0].Get_info()
    how = {"alloc": wins["alloc"][0].Get_info()["onesided_locks"], "create": info["onesided_locks"],
           "create_put": info["onesided_put_get"], "provider": wins["create"][0].provider,
           "create_am": wins["create_am"][0].Get_info()["onesided_path"], "no_mpi_create": no_create}
    iters = max(50, s.iters // 2)
    samples: dict[str, dict[str, list[float]]] = {
        name: {k: [] for k in EPOCH_COLUMNS} for name in EPOCH_ROWS}
    for name in EPOCH_ROWS:
        progress(f"lock epochs: {name}")
        for _ in range(s.reps):
            for key, (win, lib, mpi) in wins.items():
                call = latency_calls(win, lib, b, not mpi)[name]
                assert call is not None
                value = _on_origin(comm, mpi, lambda win=win, call=call: _epoch_us(win, call, iters))
                if comm.rank == 0:
                    samples[name][key].append(value)
    for win, _, _ in wins.values():
        win.Free()
    onesided.Free_mem(blocks["onesided"])
    MPI.Free_mem(blocks["mpi"])
    if comm.rank != 0:
        return None
    rows = {name: {k: Spread.of(v) if v else None for k, v in cols.items()} for name, cols in samples.items()}
    return {"rows": rows, "how": how, "iters": iters}


def epoch_latency_text(res: dict[str, Any], s: Settings, peer: str) -> str:
    us = fmt_us

    rows = [[name, us(f["alloc"]), us(f["mpi_alloc"]), fmt_ratio(f["alloc"], f["mpi_alloc"]),
             us(f["create"]), us(f["mpi_create"]), fmt_ratio(f["create"], f["mpi_create"]),
             us(f.get("create_am")), us(f.get("mpi_create_am")), fmt_ratio(f.get("create_am"), f.get("mpi_create_am"))]
            for name, f in res["rows"].items()]
    how = res["how"]
    head = heading(
        "1b. Lock epochs: Lock + 8 B op + Unlock, 2 ranks on one host",
        f"us per epoch: median [min, max] of {s.reps} repetitions of {res['iters']}, the four columns taking turns. "
        f"onesided with default settings: Allocate windows take the shared-memory path (locks: {how['alloc']}); "
        f"Create windows over user memory use provider `{how['provider']}` (puts and gets: {how['create_put']}; "
        f"locks: {how['create']}); Create over onesided.Alloc_mem memory takes the `{how.get('create_am')}` path. "
        f"Peer: mpi4py MPI.Win.Allocate / MPI.Win.Create (over np.zeros, and over MPI.Alloc_mem) on {peer}."
        + (f" MPI.Win Create: n/a, {how['no_mpi_create']}." if how["no_mpi_create"] else ""),
    )
    return head + "\n" + table(
        ["operation", "onesided Allocate", "MPI.Win Allocate", "ratio", "onesided Create", "MPI.Win Create",
         "ratio", "onesided Create(Alloc_mem)", "MPI.Win Create(Alloc_mem)", "ratio"], rows)


# -- 2. bandwidth -------------------------------------------------------------

def _loops(s: Settings, size: int) -> int:
    return max(1, min(s.bw_max_loops, s.bw_budget // (size * s.window)))


def bandwidth(comm: Any, MPI: Any, onesided: Any, s: Settings, progress: Progress) -> dict[str, Any] | None:
    """Put and get bandwidth, ``window`` ops of one size to the same target
    offset then one Flush (OSU put_bw/get_bw style), GB/s = 1e9 B/s."""
    top = max(s.sizes)
    src, dst = RovingBuffer(top, 7), RovingBuffer(top, 0)
    ours = onesided.Window.Allocate(top, disp_unit=1, info=FAST, comm=comm)
    theirs = MPI.Win.Allocate(top, disp_unit=1, comm=comm)
    out: dict[int, dict[str, float]] = {}
    for size in s.sizes:
        progress(f"bandwidth: {fmt_size(size)}")
        loops = _loops(s, size)

        def entries(rep: int, size: int = size) -> list[Entry]:
            o, d = src.at(rep, size), dst.at(rep, size)
            return [(f"{op} {column}", win, mpi, (win.Put, (o, 1)) if op == "put" else (win.Get, (d, 1)))
                    for op in ("put", "get")
                    for column, win, mpi in (("onesided", ours, False), ("mpi", theirs, True))]

        got = _interleaved(comm, entries, s.reps,
                           lambda call, win: batch_seconds(call, win.Flush, 1, s.window, loops))
        if comm.rank == 0:
            row = {key: sec.map(lambda x: size * s.window / x / 1e9) for key, sec in got.items()}
            memcpy = [batch_seconds((np.copyto, (dst.at(rep, size), src.at(rep, size))), None, 0, s.window, loops)
                      for rep in range(s.reps)]
            row["memcpy"] = Spread.of(memcpy).map(lambda x: size * s.window / x / 1e9)
            out[size] = row
    ours.Free()
    theirs.Free()
    if comm.rank != 0:
        return None
    return {"rows": out}


def bandwidth_text(res: dict[str, Any], s: Settings, peer: str = "") -> str:
    rows = []
    for size, f in res["rows"].items():
        rows.append([fmt_size(size),
                     fmt_num(f["put onesided"]), fmt_num(f["put mpi"]), fmt_ratio(f["put onesided"], f["put mpi"]),
                     fmt_num(f["get onesided"]), fmt_num(f["get mpi"]), fmt_ratio(f["get onesided"], f["get mpi"]),
                     fmt_num(f["memcpy"])])
    head = heading(
        "2. Bandwidth: put and get, GB/s (1e9 B/s)",
        f"{s.window} ops of one size to the same target offset, then one Flush (OSU put_bw style), "
        f"repeated up to {s.bw_max_loops} times (at least once, about {s.bw_budget >> 20} MiB in all); median [min, max] "
        f"of {s.reps} repetitions, the columns taking turns. onesided on the shared-memory path, peer "
        "MPI.Win.Allocate. ratio = onesided / MPI.Win (above 1: onesided faster).",
        "memcpy: np.copyto of the same size within one process, as a reference. A put on the shared-memory path is "
        "a copy by the origin's core into memory the target maps, and nothing reads it on the target's "
        "core during the loop. A cross-core memcpy, where the other core then reads the data, cannot be "
        "measured simply from Python, so this column is a same-core copy. Buffers up to 4 MiB stay in "
        "cache, so the large sizes measure cache bandwidth, not DRAM bandwidth. The origin's buffers start at "
        "another page each repetition (8 places, 37 pages apart), the same for every column, so that no column "
        "keeps an unlucky virtual distance to them (on AMD cores 20-30% slower at 2^27 + 4 KiB or 2^28).",
    )
    return head + "\n" + table(
        ["size", "put onesided", "put MPI.Win", "put ratio", "get onesided", "get MPI.Win", "get ratio", "memcpy"],
        rows)


# -- 3. message rate ----------------------------------------------------------

RATE_ROWS = ["put 8 B", "accumulate SUM int64"]


def message_rate(comm: Any, MPI: Any, onesided: Any, s: Settings, progress: Progress) -> dict[str, Any] | None:
    """8-byte non-blocking ops, ``rate_batch`` per Flush, ops/s."""
    b = _buffers()
    ours = onesided.Window.Allocate(64, disp_unit=8, info=FAST, comm=comm)
    theirs = MPI.Win.Allocate(64, disp_unit=8, comm=comm)
    out: dict[str, dict[str, float]] = {}
    for name in RATE_ROWS:
        progress(f"message rate: {name}")
        entries = []
        for column, win, lib, mpi in (("onesided", ours, onesided, False), ("mpi", theirs, MPI, True)):
            call = latency_calls(win, lib, b, not mpi)[name]
            assert call is not None
            entries.append((column, win, mpi, call))
        got = _interleaved(comm, entries, s.reps,
                           lambda call, win: batch_seconds(call, win.Flush, 1, s.rate_batch, s.rate_batches))
        row = {key: sec.map(lambda x: s.rate_batch / x) for key, sec in got.items()}
        if comm.rank == 0:
            out[name] = row
    ours.Free()
    theirs.Free()
    return {"rows": out} if comm.rank == 0 else None


def message_rate_text(res: dict[str, Any], s: Settings, peer: str = "") -> str:
    rows = [[name, fmt_rate(f["onesided"]), fmt_rate(f["mpi"]), fmt_ratio(f["onesided"], f["mpi"])]
            for name, f in res["rows"].items()]
    head = heading(
        f"3. Message rate: 8 B ops, {s.rate_batch} per Flush",
        f"Millions of ops per second at the origin: median [min, max] of {s.reps} repetitions of {s.rate_batches} "
        "flushes, the columns taking turns. onesided "
        "on the shared-memory path, peer MPI.Win.Allocate. ratio = onesided / MPI.Win (above 1: onesided faster).",
    )
    return head + "\n" + table([f"operation ({s.rate_batch} per flush)", "onesided shared-memory path", "MPI.Win", "ratio"],
                               rows)


# -- rows the table across peers repeats (peers.py) ---------------------------

def latency_summary(res: dict[str, Any]) -> list[SummaryRow]:
    return [(name, "us", f["shared"], f["mpi"], False) for name, f in res["rows"].items() if f["mpi"] is not None]


def epoch_latency_summary(res: dict[str, Any]) -> list[SummaryRow]:
    rows: list[SummaryRow] = []
    for kind, ours, theirs in (("Allocate", "alloc", "mpi_alloc"), ("Create", "create", "mpi_create"),
                               ("Create over Alloc_mem", "create_am", "mpi_create_am")):
        rows += [(f"{name}, {kind}", "us", f.get(ours), f.get(theirs), False) for name, f in res["rows"].items()]
    return rows


def message_rate_summary(res: dict[str, Any]) -> list[SummaryRow]:
    def mops(v: Spread) -> Spread:
        return v.map(lambda x: x / 1e6)

    return [(name, "Mops/s", mops(f["onesided"]), mops(f["mpi"]), True) for name, f in res["rows"].items()]
