"""Large puts beside the MPI in the same job, and copies into either
library's shared segment (docs/performance.md, "Results on an idle machine
(2026-12-07, c2f3759)": the large Allocate rows of figures 2b/2c).
Rank 0 prints GB/s (1e9 B/s), median [min, max] of 9 loops of 64 MiB:

* np.copyto into rank 1's segment of onesided's and of MPI's
  Allocate_shared window (Shared_query), taking turns;
* onesided win.Put + Flush and MPI.Win Put + Flush to rank 1 of an
  Allocate window each, and np.copyto into MPI's segment, taking turns.

Usage (the MPICH 5 wheel, as `make bench-peers` runs it):
    PYTHONPATH=build/site .venv-mpich5/bin/mpiexec -n 2 .venv-mpich5/bin/python tools/peer_segments.py"""

from mpi4py import MPI  # noqa: I001  first: the wheel's libfabric (docs/performance.md, import order)

import time

import numpy as np

import onesided


def rates(calls: dict, n: int) -> None:
    reps = max(16, (64 << 20) // n)
    res: dict[str, list[float]] = {k: [] for k in calls}
    for _ in range(9):
        for name, f in calls.items():
            t = time.perf_counter()
            for _ in range(reps):
                f()
            res[name].append(n * reps / (time.perf_counter() - t) / 1e9)
    for name, v in res.items():
        v.sort()
        print(f"{n >> 10:5d} KiB {name:40s} {v[4]:.1f} GB/s [{v[0]:.1f}, {v[-1]:.1f}]", flush=True)


def main() -> None:
    comm = MPI.COMM_WORLD
    top = 8 << 20
    shared = {"onesided": onesided.Window.Allocate_shared(top, 1, comm=comm),
              "MPI.Win": MPI.Win.Allocate_shared(top, 1, comm=comm)}
    segments = {k: np.frombuffer(w.Shared_query(1)[0], np.uint8) for k, w in shared.items()}
    ours, peer = onesided.Window.Allocate(top, 1, comm=comm), MPI.Win.Allocate(top, 1, comm=comm)
    comm.Barrier()
    if comm.Get_rank() == 0:
        ours.Lock_all()
        peer.Lock_all()
        for n in (256 << 10, 1 << 20, 4 << 20):
            src = np.full(n, 7, np.uint8)
            rates({f"np.copyto into {k}'s segment": (lambda s=s: np.copyto(s[:n], src)) for k, s in segments.items()}, n)
            rates({"onesided Put + Flush": lambda: (ours.Put(src, 1, 0), ours.Flush(1)),
                   "MPI.Win Put + Flush": lambda: (peer.Put(src, 1, 0), peer.Flush(1))}, n)
        ours.Unlock_all()
        peer.Unlock_all()
    comm.Barrier()
    for w in (*shared.values(), ours, peer):
        w.Free()


if __name__ == "__main__":
    main()
