"""Figures 2b and 2c: put and get bandwidth on every window kind, 8 B to 64 MiB,
beside a single-core memcpy measured in the same run and beside ``MPI.Win``
of the same kind (issue 27 item 6).

Rank 0 puts (gets) a contiguous uint8 buffer to (from) rank 1's window:
``batch`` ops of one size to the same target offset, then one Flush, as
figure 2 does, for onesided and ``MPI.Win`` made by Allocate, Create (over a
fresh numpy array), Allocate_shared and Create_dynamic (one attached array,
addressed by ``Get_address``). One kind of window exists at a time, so the
largest size costs four windows of 64 MiB, not sixteen. ``memcpy`` is
``np.copyto`` of the same size within rank 0, between the same two
buffers, taking its turn with the windows in every repetition: the limit a
put on the shared-memory path (a copy by the origin's core) can reach. The
buffers start at another page each repetition (``RovingBuffer``), so that
no column keeps an unlucky virtual distance to them for a whole row.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._common import (
    Progress,
    RovingBuffer,
    Settings,
    Spread,
    batch_seconds,
    fmt_num,
    fmt_ratio,
    fmt_size,
    heading,
    table,
)
from ._figures import Entry, _interleaved

KINDS = ("Allocate", "Create", "Allocate_shared", "Create_dynamic")
FULL_SIZES = [8, 64, 512, 4 << 10, 32 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20]
QUICK_SIZES = [8, 4 << 10, 1 << 20, 16 << 20]


def _batch(size: int) -> int:
    # OSU's 64 ops per flush for small sizes; up to 4 MiB per flush above.
    return max(1, min(64, (4 << 20) // size))


def _batches(s: Settings, size: int) -> int:
    return max(1, min(s.bw_max_loops, s.bw_budget // (size * _batch(size))))


def _make(lib: Any, kind: str, top: int, comm: Any, MPI: Any) -> tuple[Any, int, Any]:
    """A window of ``kind`` over ``top`` bytes per rank, rank 1's displacement
    of its first byte, and what must outlive the window (its memory)."""
    mpi = lib is MPI
    memory: Any = None
    if kind == "Allocate":
        win = lib.Win.Allocate(top, disp_unit=1, comm=comm) if mpi else lib.Window.Allocate(top, 1, comm=comm)
    elif kind == "Create":
        memory = np.zeros(top, np.uint8)
        win = lib.Win.Create(memory, disp_unit=1, comm=comm) if mpi else lib.Window.Create(memory, 1, comm=comm)
    elif kind == "Allocate_shared":
        win = (lib.Win.Allocate_shared(top, disp_unit=1, comm=comm) if mpi
               else lib.Window.Allocate_shared(top, 1, comm=comm))
    else:
        memory = np.zeros(top, np.uint8)
        win = lib.Win.Create_dynamic(comm=comm) if mpi else lib.Window.Create_dynamic(comm=comm)
        win.Attach(memory)
        address = MPI.Get_address(memory) if mpi else lib.Get_address(memory)
        return win, comm.allgather(address)[1], memory
    return win, 0, memory


def _peer_window(MPI: Any, kind: str, top: int, comm: Any) -> tuple[tuple[Any, int, Any] | None, str]:
    """``MPI.Win`` of ``kind`` (as :func:`_make`) and "", or None and why at
    every rank when some rank's MPI cannot make it (Open MPI's osc/sm makes
    no Create or Create_dynamic windows). A window made at some ranks only
    is left: Free is collective."""
    try:
        made, failed = _make(MPI, kind, top, comm, MPI), ""
    except Exception as e:  # the peer's own refusal, an MPI.Exception
        made, failed = None, f"{type(e).__name__}: {e}"
    reasons = [r for r in comm.allgather(failed) if r]
    return (None, reasons[0]) if reasons else (made, "")


def kinds_bandwidth(comm: Any, MPI: Any, onesided: Any, s: Settings, progress: Progress) -> dict[str, Any] | None:
    """GB/s (1e9 B/s) per op, kind, library and size; rank 0's result."""
    sizes = QUICK_SIZES if s.quick else FULL_SIZES
    top = max(sizes)
    src, dst = RovingBuffer(top, 7), RovingBuffer(top, 0)
    out: dict[tuple[str, int], dict[str, Spread]] = {}
    skipped: dict[str, str] = {}
    for kind in KINDS:
        made = {"onesided": _make(onesided, kind, top, comm, MPI)}
        theirs, why = _peer_window(MPI, kind, top, comm)
        if theirs is None:
            skipped[kind] = why
        else:
            made["MPI.Win"] = theirs
        for size in sizes:
            progress(f"bandwidth by kind: {kind}, {fmt_size(size)}")

            def entries(rep: int, size: int = size) -> list[Entry]:
                o, d = src.at(rep, size), dst.at(rep, size)
                out: list[Entry] = []
                for lib, (win, disp, _) in made.items():
                    out.append((f"put {lib}", win, lib == "MPI.Win", (win.Put, (o, 1, disp))))
                    out.append((f"get {lib}", win, lib == "MPI.Win", (win.Get, (d, 1, disp))))
                return out + [("memcpy", None, False, (np.copyto, (d, o)))]

            batch, batches = _batch(size), _batches(s, size)

            def measure(call: Any, win: Any, batch: int = batch, batches: int = batches) -> float:
                return batch_seconds(call, win.Flush if win is not None else None, 1, batch, batches)

            got = _interleaved(comm, entries, s.reps, measure)
            if comm.rank == 0:
                out[(kind, size)] = {key: sec.map(lambda x: size * batch / x / 1e9) for key, sec in got.items()}
            _check(comm, made["onesided"], size)
        for win, _, _ in made.values():
            win.Free()
    return {"rows": out, "sizes": sizes, "skipped": skipped} if comm.rank == 0 else None


def _check(comm: Any, made: tuple[Any, int, Any], size: int) -> None:
    # The last put reached rank 1's memory: the figure measured transfers.
    win, disp, _ = made
    comm.Barrier()
    if comm.rank == 0:
        got = np.zeros(min(size, 64), np.uint8)
        win.Lock(1)
        win.Get(got, 1, disp)
        win.Unlock(1)
        assert (got == 7).all(), "bandwidth by kind: the target's memory does not hold the puts"
    comm.Barrier()


def kinds_bandwidth_text(res: dict[str, Any], s: Settings, peer: str = "") -> str:
    parts = []
    for number, op in (("2b", "put"), ("2c", "get")):
        rows = []
        for size in res["sizes"]:
            memcpy = res["rows"][("Allocate", size)]["memcpy"]  # measured beside the Allocate windows
            row = [fmt_size(size), fmt_num(memcpy)]
            for kind in KINDS:
                f = res["rows"][(kind, size)]
                row += [fmt_num(f[f"{op} onesided"]), fmt_num(f.get(f"{op} MPI.Win")),
                        fmt_ratio(f[f"{op} onesided"], f.get(f"{op} MPI.Win"))]
            row.append(fmt_ratio(res["rows"][("Allocate", size)][f"{op} onesided"], memcpy))
            rows.append(row)
        head = heading(
            f"{number}. Bandwidth by window kind: {op}, GB/s (1e9 B/s)",
            "Up to 64 ops of one size to the same target offset (at most 4 MiB per Flush), then one Flush; "
            f"median [min, max] of {s.reps} repetitions, the columns taking turns. Each kind: onesided with its "
            "default settings beside MPI.Win of the same kind; ratio = onesided / MPI.Win (above 1: onesided "
            "faster). memcpy: np.copyto of the same size within rank 0 (single core), the Allocate window's "
            "figure; Allocate / memcpy is onesided's share of it. Sizes past the caches (32 MiB L3 here) "
            "measure memory bandwidth. The origin's buffers start at another page each repetition (8 places, "
            "37 pages apart), the same for every column: a copy between lines at some virtual distances "
            "(2^27 + 4 KiB, 2^28) runs 20-30% slower on AMD cores, and where each library's window lands "
            "from one buffer is an accident of mmap's order."
            + "".join(f" MPI.Win {kind}: n/a, {why}." for kind, why in res.get("skipped", {}).items()),
        )
        headers = ["size", "memcpy"]
        for kind in KINDS:
            headers += [f"{kind}", "MPI.Win", "ratio"]
        headers.append("Allocate / memcpy")
        parts.append(head + "\n" + table(headers, rows))
    return "\n\n".join(parts)
