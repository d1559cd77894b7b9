"""Large puts into an Allocate window in a world of one, beside np.copyto
into the same memory: whether the put itself reaches the copy's bandwidth
(docs/performance.md, "Results on an idle machine (2026-12-07)").

Usage: python tools/put_bandwidth.py. Prints GB/s (1e9 B/s), median [min,
max] of 7 runs of a loop, per size."""

import time

import numpy as np

import onesided


def main() -> None:
    w = onesided.Window.Allocate(8 << 20, 1)
    win = np.frombuffer(w.tomemory(), np.uint8)
    w.Lock_all()
    for n in (256 << 10, 1 << 20, 4 << 20):
        src = np.ones(n, np.uint8)
        reps = max(20, (64 << 20) // n)
        calls = [
            ("np.copyto", lambda: np.copyto(win[:n], src)),
            ("win.Put", lambda: w.Put(src, 0, 0)),
            ("win.Put+Flush", lambda: (w.Put(src, 0, 0), w.Flush(0))),
        ]
        for name, call in calls:
            runs = []
            for _ in range(7):
                t = time.perf_counter()
                for _ in range(reps):
                    call()
                runs.append(n * reps / (time.perf_counter() - t) / 1e9)
            runs.sort()
            print(f"{n >> 10:5d} KiB {name:14s} {runs[3]:6.1f} GB/s [{runs[0]:.1f}, {runs[-1]:.1f}]")
    w.Unlock_all()
    w.Free()


if __name__ == "__main__":
    main()
