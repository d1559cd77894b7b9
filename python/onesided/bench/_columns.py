"""Figure 3b: the column exchange of a halo (issue 19), one run, three ways,
for puts, gets and accumulates.

Put: rank 0 puts column 0 of its C-order float64 array ``a`` (rows x COLS)
into column COLS - 1 of the same-shaped array in rank 1's window, then
Flushes. Get: rank 0 gets column COLS - 1 of rank 1's array into column 0
of its own array ``b``, then Flushes. Accumulate: as the put, with
Accumulate SUM (the copy way: np.copyto, then a contiguous Accumulate).

* ``strided``: ``win.Put(a[:, 0], 1, (0, 1, Layout.of(...)))`` and
  ``win.Get(b[:, 0], 1, (0, 1, Layout.of(...)))``, onesided moving the
  strided view itself;
* ``copy``: what users did before. Put: ``np.copyto`` of the column into a
  contiguous temporary, then a contiguous put (into a staging row of the
  target's window: unpacking it into the target's column, which this
  workaround also needs, is not counted, so this column flatters it). Get:
  a contiguous get of the target's staging row into the temporary, then
  (after the Flush) ``np.copyto`` into the column (packing the target's
  column into its staging row is not counted);
* ``MPI.Win vector``: mpi4py's ``MPI.Win.Allocate`` with an
  ``MPI.DOUBLE.Create_vector(rows, 1, COLS)`` datatype at origin and target,
  the MPI way.

The figure is microseconds per op + Flush; the ratios are strided / copy
and strided / MPI.Win (below 1: the strided op is faster).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._common import Progress, Settings, fmt_ratio, fmt_us, heading, latency_us, table
from ._figures import FAST, SHM, _interleaved

COLS = 64
ROWS = (64, 1024, 8192)


def column_exchange(comm: Any, MPI: Any, onesided: Any, s: Settings, progress: Progress) -> dict[str, Any] | None:
    """us per column put, get or accumulate + Flush, by path, rows and op,
    for each way (rank 0's result)."""
    paths = {"shared-memory path": FAST} if s.quick else {"shared-memory path": FAST, "libfabric shm": SHM}
    out: dict[tuple[str, int, str], dict[str, Any]] = {}
    for path, info in paths.items():
        # libfabric moves a column as piece messages of 4 KiB each (tens of
        # microseconds per column at 1024 rows): its rows stop at 1024 and
        # at 20 ops per repetition, to keep the full run short.
        for rows in ROWS if info is FAST else ROWS[:2]:
            progress(f"column exchange: {path}, {rows} rows")
            nbytes = (rows * COLS + rows) * 8  # the array, then a staging area of one column
            ours = onesided.Window.Allocate(nbytes, disp_unit=8, info=info, comm=comm)
            theirs = MPI.Win.Allocate(nbytes, disp_unit=8, comm=comm)
            a = np.arange(rows * COLS, dtype=np.float64).reshape(rows, COLS)
            shape = np.empty((rows, COLS))
            into = onesided.Layout.of(shape[:, -1], shape)
            staging = rows * COLS  # element where the contiguous staging area starts
            temporary = np.empty(rows)
            vector = MPI.DOUBLE.Create_vector(rows, 1, COLS).Commit()

            def packed(win: Any = ours) -> None:
                np.copyto(temporary, a[:, 0])
                win.Put(temporary, 1, staging)

            def packed_sum(win: Any = ours) -> None:
                np.copyto(temporary, a[:, 0])
                win.Accumulate(temporary, 1, staging, onesided.SUM)

            b = np.zeros((rows, COLS))
            entries = {
                "put": [
                    ("strided", ours, False, (ours.Put, (a[:, 0], 1, (0, 1, into)))),
                    ("copy", ours, False, (packed, ())),
                    ("MPI.Win vector", theirs, True, (theirs.Put, ([a, 1, vector], 1, (COLS - 1, 1, vector)))),
                ],
                "get": [
                    ("strided", ours, False, (ours.Get, (b[:, 0], 1, (0, 1, into)))),
                    ("copy", _ThenUnpack(ours, lambda: np.copyto(b[:, 0], temporary)), False,
                     (ours.Get, (temporary, 1, staging))),
                    ("MPI.Win vector", theirs, True, (theirs.Get, ([b, 1, vector], 1, (COLS - 1, 1, vector)))),
                ],
                # Last: it changes the target's column, which the check below
                # then expects to hold a[:, 0] once per accumulate, plus the put.
                "accumulate SUM": [
                    ("strided", ours, False, (ours.Accumulate, (a[:, 0], 1, (0, 1, into), onesided.SUM))),
                    ("copy", ours, False, (packed_sum, ())),
                    ("MPI.Win vector", theirs, True,
                     (theirs.Accumulate, ([a, 1, vector], 1, (COLS - 1, 1, vector), MPI.SUM))),
                ],
            }
            iters = max(20, min(s.iters, (s.bw_budget // 8) // (rows * 8))) if info is FAST else 20
            for op, calls in entries.items():
                got = _interleaved(comm, calls, s.reps, lambda call, win: latency_us(call, win.Flush, 1, iters))
                if comm.rank == 0:
                    out[(path, rows, op)] = got
            # Each latency_us call: a warm-up of a tenth, then iters.
            sums = s.reps * (max(10, iters // 10) + iters)
            _check_column(comm, ours, theirs, a, b, rows, 1 + sums)
            vector.Free()
            ours.Free()
            theirs.Free()
    return {"rows": out} if comm.rank == 0 else None


class _ThenUnpack:
    """A window whose Flush also does the copy out of the temporary that a
    contiguous get needs before its data is in the column."""

    def __init__(self, win: Any, unpack: Any) -> None:
        self.win, self.unpack = win, unpack

    def Lock_all(self) -> None:
        self.win.Lock_all()

    def Unlock_all(self) -> None:
        self.win.Unlock_all()

    def Flush(self, target: int) -> None:
        self.win.Flush(target)
        self.unpack()


def _check_column(comm: Any, ours: Any, theirs: Any, a: np.ndarray, b: np.ndarray, rows: int, times: int) -> None:
    # The target's last column holds rank 0's first column `times` times
    # over (the put, then every accumulate) in both libraries' windows,
    # and rank 0's b got the column back: the figure measured transfers
    # that happened (every value and sum is exact in float64).
    comm.Barrier()
    if comm.rank == 1:
        for win in (ours, theirs):
            win.Lock(1)
            got = np.frombuffer(win, np.float64)[: rows * COLS].reshape(rows, COLS)[:, -1].copy()
            win.Unlock(1)
            assert np.array_equal(got, a[:, 0] * times), "column exchange: the target's column is wrong"
    if comm.rank == 0:
        assert np.array_equal(b[:, 0], a[:, 0]), "column exchange: the column got back is wrong"
    comm.Barrier()


def column_exchange_text(res: dict[str, Any], s: Settings, peer: str = "") -> str:
    rows = []
    for (path, n, op), f in res["rows"].items():
        rows.append([f"{path}, {n} x {COLS}, {op}", fmt_us(f["strided"]), fmt_us(f["copy"]),
                     fmt_us(f["MPI.Win vector"]), fmt_ratio(f["strided"], f["copy"]),
                     fmt_ratio(f["strided"], f["MPI.Win vector"])])
    head = heading(
        "3b. Column exchange: one column of a rows x 64 float64 array to (put, accumulate) or from (get) a "
        "neighbour's column, + Flush",
        f"us per op + Flush: median [min, max] of {s.reps} repetitions, the columns taking turns. strided: "
        "`win.Put(a[:, 0], 1, (0, 1, onesided.Layout.of(...)))`, `win.Get(b[:, 0], ...)`; copy: for a put, "
        "np.copyto into a contiguous temporary, then a contiguous put (the unpack at the target that this "
        "workaround also needs is not counted); for a get, a contiguous get into the temporary, then np.copyto "
        "into the column after the Flush (the pack at the target is not counted); for an accumulate, as for a put, "
        "with Accumulate SUM; MPI.Win vector: mpi4py "
        "`MPI.Win.Allocate` with a `Create_vector(rows, 1, 64)` datatype at both ends. Ratios: strided / the "
        "other (below 1: the strided op is faster).",
    )
    return head + "\n" + table(["window, array, op", "strided", "copy", "MPI.Win vector", "strided/copy",
                                "strided/MPI.Win"], rows)
