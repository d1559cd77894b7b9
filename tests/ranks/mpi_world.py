"""onesided.COMM_WORLD in a rank of an MPI job is mpi4py's MPI.COMM_WORLD
itself, and goes wherever mpi4py takes a communicator.

Usage (from tests/test_mpi_job.py): mpiexec -n N python mpi_world.py, not
under ``-m mpi4py``: the first check is that ``import onesided`` alone leaves
MPI uninitialised. Every rank asserts; each prints "PASS <rank>" at the end.
"""

from __future__ import annotations

import sys
import traceback


def abort_the_job(kind, value, tb) -> None:
    """A failed check on one rank stops every rank (not a hang in the next
    collective until the test's timeout)."""
    traceback.print_exception(kind, value, tb)
    if "mpi4py.MPI" in sys.modules:
        sys.modules["mpi4py.MPI"].COMM_WORLD.Abort(1)


sys.excepthook = abort_the_job

import numpy as np

import onesided

# import onesided chose nothing yet: a program may still set mpi4py.rc.
assert "mpi4py.MPI" not in sys.modules, "import onesided imported mpi4py.MPI"
import mpi4py

mpi4py.rc.thread_level = "serialized"  # taken into account only if MPI is not initialised yet
world = onesided.COMM_WORLD  # the first read imports mpi4py.MPI, which initialises MPI
assert "mpi4py.MPI" in sys.modules
from mpi4py import MPI

assert MPI.Query_thread() == MPI.THREAD_SERIALIZED, MPI.Query_thread()

# The identity, however it is reached.
assert world is MPI.COMM_WORLD, (type(world), world)
from onesided import COMM_WORLD

assert COMM_WORLD is MPI.COMM_WORLD
rank, size = world.rank, world.Get_size()

# Everywhere mpi4py takes a communicator.
assert world.allreduce(rank) == size * (size - 1) // 2
assert world.Get_group().Get_size() == size
win = MPI.Win.Allocate(8, 8, comm=onesided.COMM_WORLD)
assert win.Get_group().Get_size() == size
win.Fence()
win.Free()
half = onesided.COMM_WORLD.Split(rank % 2, rank)
assert half.Get_size() == len(range(rank % 2, size, 2))
assert isinstance(onesided.COMM_WORLD.Dup(), MPI.Intracomm)

# onesided's windows over it, given and by default, span the MPI job.
for comm in (onesided.COMM_WORLD, None, half):
    owin = onesided.Window.Allocate(8, 8, comm=comm)
    group = owin.Get_group()
    assert isinstance(group, MPI.Group) and group.Get_size() == (half.Get_size() if comm is half else size)
    group.Free()
    owin.Free()
half.Free()

# A window's collectives run over its own duplicate of the caller's
# communicator: the caller may free it at once, and Fence and Free still
# work. A window left on the caller's communicator would raise here.
mine = world.Dup()
owin = onesided.Window.Allocate(8, 8, comm=mine)
mine.Free()
owin.Fence()
owin.Put(np.array([rank], np.int64), (rank + 1) % size)
owin.Fence()
assert np.frombuffer(owin, np.int64)[0] == (rank - 1) % size
owin.Free()
print("PASS", rank, flush=True)
