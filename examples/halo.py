"""A 2-D Jacobi stencil whose halos are strided puts (issue 19's example).

The grid (NY x NX interior points inside a fixed boundary: 1.0 along the
top edge, 0.0 elsewhere) is split by columns among the ranks. Each rank
keeps its block, with a ghost column on either side, in a window. Every
sweep, each rank puts its first interior column into the right ghost
column of its left neighbour, and its last one into the left ghost column
of its right neighbour. A column is a strided numpy view (``u[1:-1, 1]``)
and the target is the same column of the neighbour's array, given as an
``onesided.Layout`` of that view: nothing is copied into a contiguous
buffer and back. Two fences per sweep: one before the puts (every rank has
finished reading its ghosts), one after (the ghosts have arrived). At the
end rank 0 gathers the blocks and checks them against the same iteration
on the whole grid in one process (numpy), bit for bit. Run with:

    python -m onesided run -n 4 examples/halo.py
    mpiexec -n 4 python examples/halo.py        (needs mpi4py)
"""

import os
import time

import numpy as np

import onesided

NY, NX, SWEEPS = 48, 64, 200


def sweep(u: np.ndarray) -> None:
    """One Jacobi sweep of the interior of u (ghosts and boundary fixed)."""
    u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])


def initial() -> np.ndarray:
    """The whole grid with its boundary, before the first sweep."""
    g = np.zeros((NY + 2, NX + 2))
    g[0, :] = 1.0
    return g


def communicator():
    # Under mpiexec (and not under onesided's launcher) use mpi4py's world.
    if "ONESIDED_RANK" not in os.environ and any(k in os.environ for k in ("PMI_RANK", "OMPI_COMM_WORLD_RANK")):
        from mpi4py import MPI

        return MPI.COMM_WORLD
    return onesided.COMM_WORLD


comm = communicator()
rank, size = comm.Get_rank(), comm.Get_size()
widths = [len(c) for c in np.array_split(np.arange(NX), size)]
start = sum(widths[:rank])  # first interior column of mine, in the whole grid's interior
width = widths[rank]

win = onesided.Window.Allocate((NY + 2) * (width + 2) * 8, disp_unit=8, comm=comm)
u = np.frombuffer(win, np.float64).reshape(NY + 2, width + 2)
u[:] = initial()[:, start : start + width + 2]  # my columns and the ones on either side


def ghost(neighbour: int, side: int) -> onesided.Layout:
    """The left (side 0) or right (side -1) ghost column of a neighbour's
    array, rows 1..NY, as a Layout of that view (offsets from the start of
    the neighbour's window)."""
    shape = np.empty((NY + 2, widths[neighbour] + 2))
    return onesided.Layout.of(shape[1:-1, side], shape)


left = rank - 1 if rank > 0 else None
right = rank + 1 if rank < size - 1 else None
into_left = ghost(left, -1) if left is not None else None
into_right = ghost(right, 0) if right is not None else None

t0 = time.perf_counter()
win.Fence()
for _ in range(SWEEPS):
    win.Fence()  # every rank has read its ghosts: they may be overwritten
    if left is not None:
        win.Put(u[1:-1, 1], left, into_left)  # a strided column, no copy
    if right is not None:
        win.Put(u[1:-1, -2], right, into_right)
    win.Fence()  # the ghosts have arrived
    sweep(u)
win.Fence()
elapsed = time.perf_counter() - t0

blocks = comm.gather(u[1:-1, 1:-1].copy(), root=0)
win.Free()
if rank == 0:
    reference = initial()
    for _ in range(SWEEPS):
        sweep(reference)
    result = np.hstack(blocks)
    diff = float(np.abs(result - reference[1:-1, 1:-1]).max())
    print(f"halo: {size} ranks, {NY}x{NX} grid, {SWEEPS} sweeps in {elapsed:.3f} s; "
          f"max |difference| from the single-process run: {diff}")
    if not np.array_equal(result, reference[1:-1, 1:-1]):
        raise SystemExit("halo: MISMATCH with the single-process run")
