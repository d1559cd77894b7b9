"""Strided accumulate-style calls on the provider path, per atomic route:
a column of a rows x 64 float64 array (figure 3b's shape) into the
neighbour's window under Lock, + Flush. Accumulate SUM, and Get_accumulate
SUM into a contiguous result and into a strided one (every other element).
On the native route a strided call goes as vectored atomics; on the
software route (onesided_atomics=software) as piece-run messages, the old
values placed into the result's elements, contiguous or strided
(docs/atomics.md, "Strided atomics").

Usage: ONESIDED_SHARED_MEMORY=off python -m onesided run -n 2
tools/strided_atomics.py [ROWS ...]. Rank 0 prints us per call + Flush,
median [min, max] of 15."""

import sys

import numpy as np
from flush_timing import call_and_flush_us

import onesided
from onesided import Layout, Window


def main() -> None:
    comm = onesided.COMM_WORLD
    rows_list = [int(a) for a in sys.argv[1:]] or [64, 1024]
    for route, info in (("native", {}), ("software", {"onesided_atomics": "software"})):
        for rows in rows_list:
            win = Window.Allocate(rows * 64 * 8, 8, info=info, comm=comm)
            column = Layout((rows,), (64,), 63, dtype=np.float64)
            origin = np.ones((rows, 64))[:, 0]
            contiguous = np.zeros(rows)
            strided = np.zeros(2 * rows)[::2]
            calls = {
                "Accumulate": lambda: win.Accumulate(origin, 1, (0, 1, column), onesided.SUM),
                "Get_accumulate, contiguous result": lambda: win.Get_accumulate(
                    origin, contiguous, 1, (0, 1, column), onesided.SUM),
                "Get_accumulate, strided result": lambda: win.Get_accumulate(
                    origin, strided, 1, (0, 1, column), onesided.SUM),
            }
            comm.Barrier()
            if comm.Get_rank() == 0:
                win.Lock(1)
                for name, call in calls.items():
                    times = call_and_flush_us(call, win, 1, 15)
                    print(f"{route:8s} {rows:5d} rows  {name:34s} {times[7]:9.1f} us [{times[0]:.1f}, {times[-1]:.1f}]",
                          flush=True)
                win.Unlock(1)
            comm.Barrier()
            win.Free()


if __name__ == "__main__":
    main()
