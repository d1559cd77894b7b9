"""Large copies into a peer's shared-memory segment in a 2-rank job: np.copyto
into the mapping Shared_query gives, beside win.Put to the same rank, and
the same into rank 0's own segment (docs/performance.md, "Results on an
idle machine (2026-12-07)"): whether the put is the copy.

Usage: mpiexec -n 2 python tools/peer_put_bandwidth.py. Rank 0 prints GB/s
(1e9 B/s), median [min, max] of 9 runs of a loop."""

import time

import numpy as np

import onesided

comm = onesided.COMM_WORLD
rank = comm.Get_rank()
top = 8 << 20
win = onesided.Window.Allocate_shared(top, 1, comm=comm)
buf1, _ = win.Shared_query(1)
peer = np.frombuffer(buf1, np.uint8)
buf0, _ = win.Shared_query(0)
own = np.frombuffer(buf0, np.uint8)
comm.Barrier()
if rank == 0:
    win.Lock_all()
    for n in (1 << 20, 4 << 20):
        src = np.full(n, 7, np.uint8)
        reps = max(16, (64 << 20) // n)
        for name, f in [("copyto peer", lambda: np.copyto(peer[:n], src)), ("Put peer", lambda: win.Put(src, 1, 0)),
                        ("copyto own", lambda: np.copyto(own[:n], src)), ("Put own", lambda: win.Put(src, 0, 0))]:
            res = []
            for r in range(9):
                t = time.perf_counter()
                for i in range(reps): f()
                win.Flush_all()
                res.append(n * reps / (time.perf_counter() - t) / 1e9)
            res.sort()
            print(f"{n>>10:5d} KiB {name:12s} {res[4]:6.1f} GB/s [{res[0]:.1f}, {res[-1]:.1f}]", flush=True)
    win.Unlock_all()
comm.Barrier()
win.Free()
