"""Figure 3b: the column exchange of a halo (issue 19), one run, three ways.

Rank 0 puts column 0 of its C-order float64 array ``a`` (rows x COLS) into
column COLS - 1 of the same-shaped array in rank 1's window, then Flushes:

* ``strided``: ``win.Put(a[:, 0], 1, (0, 1, Layout.of(...)))``, onesided
  moving the strided view itself;
* ``pack + put``: what users did before: ``np.copyto`` of the column into a
  contiguous temporary, then a contiguous put (into a staging row of the
  target's window: unpacking it into the target's column, which this
  workaround also needs, is not counted, so this column flatters it);
* ``MPI.Win vector``: mpi4py's ``MPI.Win.Allocate`` with an
  ``MPI.DOUBLE.Create_vector(rows, 1, COLS)`` datatype at origin and target,
  the MPI way.

The figure is microseconds per put + Flush; the ratios are strided / pack +
put and strided / MPI.Win (below 1: the strided put is faster).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._common import Progress, Settings, fmt_ratio, fmt_us, heading, latency_us, table
from ._figures import FAST, SHM, _interleaved

COLS = 64
ROWS = (64, 1024, 8192)


def column_exchange(comm: Any, MPI: Any, onesided: Any, s: Settings, progress: Progress) -> dict[str, Any] | None:
    """us per column put + Flush, by rows, for each way (rank 0's result)."""
    paths = {"shared-memory path": FAST} if s.quick else {"shared-memory path": FAST, "libfabric shm": SHM}
    out: dict[tuple[str, int], dict[str, float]] = {}
    for path, info in paths.items():
        # libfabric moves a layout's runs a few per message (the provider's
        # iovec limit), milliseconds per column: its rows stop at 1024 and
        # at 20 ops per repetition.
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

            entries = [
                ("strided", ours, False, (ours.Put, (a[:, 0], 1, (0, 1, into)))),
                ("pack + put", ours, False, (packed, ())),
                ("MPI.Win vector", theirs, True, (theirs.Put, ([a, 1, vector], 1, (COLS - 1, 1, vector)))),
            ]
            iters = max(20, min(s.iters, (s.bw_budget // 8) // (rows * 8))) if info is FAST else 20
            got = _interleaved(comm, entries, s.reps, lambda call, win: latency_us(call, win.Flush, 1, iters))
            if comm.rank == 0:
                out[(path, rows)] = got
            _check_column(comm, ours, theirs, a, rows)
            vector.Free()
            ours.Free()
            theirs.Free()
    return {"rows": out} if comm.rank == 0 else None


def _check_column(comm: Any, ours: Any, theirs: Any, a: np.ndarray, rows: int) -> None:
    # The target's last column holds rank 0's first column in both
    # libraries' windows: the figure measured transfers that happened.
    comm.Barrier()
    if comm.rank == 1:
        for win in (ours, theirs):
            win.Lock(1)
            got = np.frombuffer(win, np.float64)[: rows * COLS].reshape(rows, COLS)[:, -1].copy()
            win.Unlock(1)
            assert np.array_equal(got, a[:, 0]), "column exchange: the target's column is wrong"
    comm.Barrier()


def column_exchange_text(res: dict[str, Any], s: Settings, peer: str = "") -> str:
    rows = []
    for (path, n), f in res["rows"].items():
        rows.append([f"{path}, {n} x {COLS}", fmt_us(f["strided"]), fmt_us(f["pack + put"]),
                     fmt_us(f["MPI.Win vector"]), fmt_ratio(f["strided"], f["pack + put"]),
                     fmt_ratio(f["strided"], f["MPI.Win vector"])])
    head = heading(
        "3b. Column exchange: one column of a rows x 64 float64 array into a neighbour's column, + Flush",
        f"us per put + Flush: median [min, max] of {s.reps} repetitions, the columns taking turns. strided: "
        "`win.Put(a[:, 0], 1, (0, 1, onesided.Layout.of(...)))`; pack + put: np.copyto into a contiguous "
        "temporary, then a contiguous put (the unpack at the target that this workaround also needs is not "
        "counted); MPI.Win vector: mpi4py `MPI.Win.Allocate` with a `Create_vector(rows, 1, 64)` datatype at "
        "both ends. Ratios: strided / the other (below 1: the strided put is faster).",
    )
    return head + "\n" + table(["window, array", "strided", "pack + put", "MPI.Win vector", "strided/pack",
                                "strided/MPI.Win"], rows)
