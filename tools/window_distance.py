"""Figure 2b's large puts into an Allocate window, onesided beside MPI.Win,
with the origin's source buffer where the figure used to keep it and one
page further: the rate follows the window's virtual distance from the
buffer, not the library (docs/performance.md, "Bandwidth by window kind").

    PYTHONPATH=build/site .venv-mpich5/bin/mpiexec -n 2 \\
        .venv-mpich5/bin/python tools/window_distance.py

As the figure did before it moved its buffers: 64 MiB source and
destination arrays made first, then a 64 MiB Allocate window of each
library; rank 0 puts 64 ops of 256 KiB or 16 of 1 MiB to offset 0 of rank
1's window, then Flushes, the two libraries taking turns, median of 9.
Printed per placement of the source: where rank 1's memory of each window
lies from it (its distance, from ``Shared_query``; one page is 0x1000) and
the GB/s (1e9 B/s). Tools/copy_distance.py shows the same distances slow
a plain copy within one process.
"""

from __future__ import annotations

import time

import numpy as np
from mpi4py import MPI

import onesided

SIZE = 64 << 20
REPS = 9


def rank1_memory(win: object) -> int:
    memory = win.Shared_query(1)[0]  # type: ignore[attr-defined]
    return np.frombuffer(memory, np.uint8).ctypes.data


def rates(wins: dict[str, object], source: np.ndarray, size: int) -> dict[str, float]:
    batch = min(64, (4 << 20) // size)
    loops = max(1, (256 << 20) // (batch * size))
    o = source[:size]
    runs: dict[str, list[float]] = {name: [] for name in wins}
    for _ in range(REPS):
        for name, win in wins.items():
            t0 = time.perf_counter()
            for _ in range(loops):
                for _ in range(batch):
                    win.Put(o, 1, 0)  # type: ignore[attr-defined]
                win.Flush(1)  # type: ignore[attr-defined]
            runs[name].append(loops * batch * size / (time.perf_counter() - t0) / 1e9)
    return {name: sorted(v)[REPS // 2] for name, v in runs.items()}


def main() -> None:
    comm = MPI.COMM_WORLD
    pool = np.full(SIZE, 7, np.uint8)  # as the figure's source; a put reads 1 MiB of it at most
    destination = np.zeros(SIZE, np.uint8)  # noqa: F841  (mapped as the figure's was, never read)
    wins = {"onesided": onesided.Window.Allocate(SIZE, 1, comm=comm), "MPI.Win": MPI.Win.Allocate(SIZE, 1, comm=comm)}
    comm.Barrier()
    if comm.rank == 0:
        for win in wins.values():
            win.Lock_all()  # type: ignore[attr-defined]
        for shift in (0, 4096):
            source = pool[shift:]
            at = source.ctypes.data
            where = ", ".join(f"{name} {rank1_memory(w) - at:+#x}" for name, w in wins.items())
            print(f"source moved {shift} B; rank 1's memory from it: {where}", flush=True)
            for size in (256 << 10, 1 << 20):
                got = rates(wins, source, size)
                cells = ", ".join(f"{name} {v:.1f}" for name, v in got.items())
                print(f"  {size >> 10:5d} KiB puts, GB/s: {cells}; onesided / MPI.Win "
                      f"{got['onesided'] / got['MPI.Win']:.2f}", flush=True)
        for win in wins.values():
            win.Unlock_all()  # type: ignore[attr-defined]
    comm.Barrier()
    for win in wins.values():
        win.Free()  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
