"""Contiguous accumulate-style calls on the provider path, per atomic route:
what a window gives up on contiguous and single-element calls when it asks
for the software route (onesided_atomics=software), which serves strided
calls far better on providers that execute their atomics in software
(tools/strided_atomics.py; docs/performance.md, "Strided accumulates").
Accumulate and Get_accumulate SUM of N float64 into the neighbour's window
under Lock, + Flush, on libfabric shm and tcp;ofi_rxm.

Usage: python -m onesided run -n 2 tools/atomic_routes.py [N ...].
Rank 0 prints us per call + Flush, median [10th of 400] of 400."""

import sys

import numpy as np
from flush_timing import call_and_flush_us

import onesided
from onesided import Window


def main() -> None:
    comm = onesided.COMM_WORLD
    sizes = [int(a) for a in sys.argv[1:]] or [1, 16, 1024]
    for provider in ("shm", "tcp;ofi_rxm"):
        for route, extra in (("native", {}), ("software", {"onesided_atomics": "software"})):
            for n in sizes:
                info = {"provider": provider, "onesided_shared_memory": "off", **extra}
                win = Window.Allocate(n * 8, 8, info=info, comm=comm)
                src, res = np.ones(n), np.zeros(n)
                calls = {
                    "Accumulate": lambda: win.Accumulate(src, 1, op=onesided.SUM),
                    "Get_accumulate": lambda: win.Get_accumulate(src, res, 1, op=onesided.SUM),
                }
                comm.Barrier()
                if comm.Get_rank() == 0:
                    native = win.atomics["sum", "float64"].native
                    assert native == (route == "native"), (provider, route, str(win.atomics))
                    win.Lock(1)
                    for name, call in calls.items():
                        times = call_and_flush_us(call, win, 1, 400)
                        print(f"{provider:12s} {route:8s} {n:5d} x float64  {name:15s} "
                              f"{times[200]:8.2f} us [{times[40]:.2f}]", flush=True)
                    win.Unlock(1)
                comm.Barrier()
                win.Free()


if __name__ == "__main__":
    main()
