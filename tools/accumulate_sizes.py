"""Contiguous Accumulate SUM of N float64 + Flush into the neighbour's
window on the shared-memory path, onesided's Window.Allocate beside
MPI.Win.Allocate in the same job (docs/performance.md, "Strided
accumulates": the CPU-atomics loop).

Usage: mpiexec -n 2 python tools/accumulate_sizes.py [N ...].
Rank 0 prints the median us per call + Flush and the ratio."""

import sys

import numpy as np
from flush_timing import call_and_flush_us
from mpi4py import MPI

import onesided


def median_us(win, src, op) -> float:
    times = call_and_flush_us(lambda: win.Accumulate(src, 1, op=op), win, 1, max(5, 2_000_000 // src.size))
    return times[len(times) // 2]


def main() -> None:
    comm = MPI.COMM_WORLD
    for n in [int(a) for a in sys.argv[1:]] or [1024, 65536, 1 << 20]:
        ours = onesided.Window.Allocate(n * 8, 8, comm=comm)
        peer = MPI.Win.Allocate(n * 8, 8, comm=comm)
        src = np.ones(n)
        figures = {}
        for name, win, op in (("onesided", ours, onesided.SUM), ("MPI.Win", peer, MPI.SUM)):
            comm.Barrier()
            if comm.rank == 0:
                win.Lock(1)
                figures[name] = median_us(win, src, op)
                win.Unlock(1)
            comm.Barrier()
        if comm.rank == 0:
            print(f"n={n:8d} Accumulate SUM float64 + Flush: onesided {figures['onesided']:9.1f} us, "
                  f"MPI.Win {figures['MPI.Win']:9.1f} us, ratio {figures['onesided'] / figures['MPI.Win']:.2f} "
                  f"({ours.atomics['sum', 'float64']})", flush=True)
        ours.Free()
        peer.Free()


if __name__ == "__main__":
    main()
