"""Non-contiguous data (issue 19) on real ranks: every layout kind x Put,
Get, Accumulate, Get_accumulate, each rank targeting the next, compared
element for element with numpy doing the same assignment on a reference.

Usage (from tests/test_noncontig.py): <launcher> -n 2 noncontig.py CHECK
CHECK is "layouts" (every case, on an Allocate and a Create window),
"bounds" (out-of-window and overlapping layouts raise before anything is
written) or "nxtval" (a scalable shared counter on Create_indexed_block
types, as mpi4py's demo builds it, with onesided.Window for MPI.Win).
Where the window runs (shared-memory path, libfabric shm, tcp) is the
environment's (tests/conftest.py). Rank 0 prints "PASS CHECK cases=N".

Positions are element indices into a base array's memory (or the
window's): for numpy views they come from applying the same view to an
array of indices, for MPI datatypes from MPI itself (a Sendrecv to self of
an arange through the datatype), never from onesided's decoder.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Callable, NamedTuple

import numpy as np
from mpi4py import MPI

import harness
import onesided
from onesided import Layout, Window

comm = harness.comm()
rank, size = comm.Get_rank(), comm.Get_size()
N = 96  # int64 elements in every window
I8 = MPI.INT64_T
made: list[Any] = []  # MPI datatypes to free at the end


def typ(t: Any) -> Any:
    t.Commit()
    made.append(t)
    return t


def mpi_positions(t: Any, count: int = 1) -> np.ndarray:
    """MPI's own order of the elements of (buf, count, t), as int64
    positions from buf (negative ones allowed)."""
    base = 200
    data = np.arange(-base, 600 - base, dtype=np.int64)
    n = t.Get_size() * count // 8
    out = np.full(n, -(10**9), np.int64)
    MPI.COMM_SELF.Sendrecv([data[base:], count, t], 0, 0, [out, n, I8], 0, 0)
    return out


def view_positions(shape: tuple[int, ...], order: str, view: Callable[[Any], Any]) -> np.ndarray:
    """The memory positions, in the order onesided moves them, of
    view(base) for a base of this shape and order: a contiguous view in
    memory order, a strided one in C order."""
    index = np.arange(math.prod(shape), dtype=np.int64).reshape(shape, order=order)
    return np.asarray(view(index)).ravel(order="A")


def window_layout(shape: tuple[int, ...], view: Callable[[Any], Any]) -> tuple[Layout, np.ndarray]:
    """Layout.of a view of the window seen as a C-order array of `shape`,
    and the window positions it visits (C order of the view)."""
    base = np.zeros(shape, np.int64)
    index = np.arange(math.prod(shape), dtype=np.int64).reshape(shape)
    return Layout.of(view(base), base), view(index).ravel(order="C")


class Case(NamedTuple):
    name: str
    shape: tuple[int, ...]  # of the origin's base array
    order: str  # its memory order
    origin: Callable[[np.ndarray], Any]  # the origin (or result) spec over a base array
    origin_pos: np.ndarray
    target: Any
    target_pos: np.ndarray


def cases() -> list[Case]:
    out: list[Case] = []

    def numpy_origin(name: str, shape: tuple[int, ...], order: str, view: Callable[[Any], Any], target: Any,
                     target_pos: np.ndarray) -> None:
        out.append(Case(name, shape, order, view, view_positions(shape, order, view), target, target_pos))

    def mpi_target(name: str, t: Any, count: int = 1, disp: int = 0) -> None:
        pos = mpi_positions(t, count) + disp
        n = len(pos)
        out.append(Case(name, (n,), "C", lambda a: a, np.arange(n), (disp, count, t), pos))

    # numpy views, as origin and as target (onesided.Layout)
    lay, pos = window_layout((12, 8), lambda w: w[:6, 5])
    numpy_origin("column", (6, 8), "C", lambda a: a[:, 2], (0, 1, lay), pos)
    numpy_origin("every_other", (40,), "C", lambda a: a[::2], (3, 20), np.arange(3, 23))
    lay, pos = window_layout((12, 8), lambda w: w[11:5:-1, 7])
    numpy_origin("negative", (6, 8), "C", lambda a: a[::-1, 1], (0, 1, lay), pos)
    lay, pos = window_layout((4, 5, 4), lambda w: w[:, :, 2])
    numpy_origin("plane_3d", (4, 3, 5), "C", lambda a: a[:, 1, :], (0, 1, lay), pos)
    lay, pos = window_layout((4, 6, 4), lambda w: w[1:3, 1:5, ::-3])
    numpy_origin("plane_3d_negative", (3, 4, 2, 3), "C", lambda a: a[::2, ::-1, 1, ::2], (0, lay.count, lay), pos)
    lay, pos = window_layout((12, 8), lambda w: w[2:6, 1:3])
    numpy_origin("fortran_strided", (6, 8), "F", lambda a: a[1:5, 2:4], (0, 1, lay), pos)
    numpy_origin("fortran_whole", (4, 5), "F", lambda a: a, (7, 20), np.arange(7, 27))
    numpy_origin("zero_size", (6, 8), "C", lambda a: a[::2, 3:3], (0, 1, Layout((0,), (1,))), np.arange(0))
    numpy_origin("memoryview_strided", (60,), "C", lambda a: memoryview(a)[::3],
                 (0, 1, Layout((4, 5), (10, 2), offset=1)), (1 + np.arange(4)[:, None] * 10 + np.arange(5) * 2).ravel())
    numpy_origin("target_is_a_layout", (12,), "C", lambda a: a, Layout((3, 4), (16, 3), offset=2),
                 (2 + np.arange(3)[:, None] * 16 + np.arange(4) * 3).ravel())
    numpy_origin("layout_from_disp_negative", (5,), "C", lambda a: a, (40, 1, Layout((5,), (-7,))),
                 40 - 7 * np.arange(5))
    # MPI derived datatypes as targets
    mpi_target("vector", typ(I8.Create_vector(6, 1, 8)))
    mpi_target("hvector", typ(I8.Create_hvector(5, 2, 40)), disp=2)
    mpi_target("indexed", typ(I8.Create_indexed([2, 3, 1], [7, 0, 20])), disp=1)
    mpi_target("hindexed", typ(I8.Create_hindexed([1, 2], [80, 8])))
    mpi_target("indexed_block", typ(I8.Create_indexed_block(2, [9, 1, 30])))
    mpi_target("hindexed_block", typ(I8.Create_hindexed_block(1, [8, 0, 64, 24])), disp=3)
    mpi_target("subarray_c", typ(I8.Create_subarray([4, 6, 4], [2, 3, 2], [1, 2, 1], order=MPI.ORDER_C)))
    mpi_target("subarray_fortran", typ(I8.Create_subarray([4, 6, 4], [2, 3, 2], [1, 2, 1], order=MPI.ORDER_FORTRAN)))
    vec = I8.Create_vector(2, 1, 3)
    mpi_target("resized", typ(vec.Create_resized(0, 40)), count=2, disp=1)
    vec.Free()
    inner = I8.Create_vector(2, 1, 3)
    mpi_target("struct_one_type", typ(MPI.Datatype.Create_struct([1, 2, 1], [0, 16, 400], [I8, inner, I8])))
    inner.Free()
    mpi_target("contiguous", typ(I8.Create_contiguous(5)), count=2, disp=4)
    # MPI derived datatypes as origins (and results), with a column as target
    vec = typ(I8.Create_vector(5, 2, 8))
    out.append(Case("origin_vector", (40,), "C", lambda a: [a, 1, vec], mpi_positions(vec), (0, 10),
                    np.arange(10)))
    blk = typ(I8.Create_indexed_block(1, [0, 3, 7]).Create_resized(0, 80))
    col = typ(I8.Create_vector(6, 1, 9))
    out.append(Case("origin_and_target_derived", (30,), "C", lambda a: [a, 2, blk], mpi_positions(blk, 2),
                    (5, 1, col), mpi_positions(col) + 5))
    lay, pos = window_layout((12, 8), lambda w: w[3:9, 0])
    out.append(Case("origin_layout_target_layout", (6, 4), "C", lambda a: [a, 1, Layout((6,), (4,), offset=3)],
                    3 + 4 * np.arange(6), (0, 1, lay), pos))
    return out


def memory(a: np.ndarray) -> np.ndarray:
    """A view of a contiguous array's elements in memory order."""
    return a.reshape(-1, order="A")


def initial(who: int) -> np.ndarray:
    return 1000 * (who + 1) + np.arange(N, dtype=np.int64)


def origin_base(case: Case, who: int, salt: int) -> np.ndarray:
    n = math.prod(case.shape)
    a = np.empty(case.shape, np.int64, order=case.order)
    memory(a)[:] = 100_000 * (who + 1) + 1000 * salt + np.arange(n)
    return a


def run(case: Case, op: str, win: Window, local: np.ndarray) -> None:
    """One case: every rank does `op` into the next rank's window; each
    checks its window, and its origin/result memory, against numpy."""
    target, source = (rank + 1) % size, (rank - 1) % size
    with win.lock(rank):
        local[:] = initial(rank)
    comm.Barrier()
    a, r = origin_base(case, rank, 1), origin_base(case, rank, 2)
    a0, r0 = memory(a).copy(), memory(r).copy()
    win.Lock_all()
    if op == "Put":
        win.Put(case.origin(a), target, case.target)
    elif op == "Get":
        win.Get(case.origin(a), target, case.target)
    elif op == "Accumulate":
        win.Accumulate(case.origin(a), target, case.target, onesided.SUM)
    else:
        win.Get_accumulate(case.origin(a), case.origin(r), target, case.target, onesided.SUM)
    win.Unlock_all()
    comm.Barrier()
    win.Sync()
    # numpy does the same assignment on references
    want = initial(rank)
    theirs = memory(origin_base(case, source, 1))[case.origin_pos]
    if op == "Put":
        want[case.target_pos] = theirs
    elif op in ("Accumulate", "Get_accumulate"):
        want[case.target_pos] += theirs
    got = local.copy()
    assert np.array_equal(got, want), f"{case.name} {op}: window\n got {got}\nwant {want}"
    mine_a, mine_r = a0.copy(), r0.copy()
    if op == "Get":
        mine_a[case.origin_pos] = initial(target)[case.target_pos]
    if op == "Get_accumulate":
        mine_r[case.origin_pos] = initial(target)[case.target_pos]
    assert np.array_equal(memory(a), mine_a), f"{case.name} {op}: origin\n got {memory(a)}\nwant {mine_a}"
    assert np.array_equal(memory(r), mine_r), f"{case.name} {op}: result\n got {memory(r)}\nwant {mine_r}"


def windows() -> list[tuple[str, Window, np.ndarray]]:
    info = harness.info()
    out = []
    win = Window.Allocate(8 * N, disp_unit=8, info=info, comm=comm)
    harness.check_provider(win)
    out.append(("Allocate", win, np.frombuffer(win, np.int64)))
    mem = np.zeros(N, np.int64)
    out.append(("Create", Window.Create(mem, disp_unit=8, info=info, comm=comm), mem))
    return out


def check_layouts() -> int:
    n = 0
    for kind, win, local in windows():
        for case in cases():
            for op in ("Put", "Get", "Accumulate", "Get_accumulate"):
                try:
                    run(case, op, win, local)
                except Exception as e:
                    raise AssertionError(f"{kind} window, case {case.name}, {op}: {type(e).__name__}: {e}") from e
                n += 1
        win.Free()
    return n


def check_bounds() -> int:
    """Layouts reaching outside the target's window, or overlapping there,
    raise at the origin; nothing of the call is written."""
    bad: list[tuple[Any, type[BaseException]]] = [
        ((0, 1, Layout((7,), (16,))), onesided.BoundsError),  # last element at 96: one past the end
        ((0, 1, Layout((3,), (-4,))), onesided.BoundsError),  # before the start
        ((90, 1, Layout((2, 3), (3, 2))), onesided.BoundsError),  # the middle of the window, then past it
        ((6, 1, typ(I8.Create_vector(4, 1, 30))), onesided.BoundsError),
        ((-1, 1, typ(I8.Create_indexed_block(1, [1, 2, 3]))), onesided.BoundsError),  # disp -1, elements inside
        ((0, 1, typ(I8.Create_hindexed([1, 1, 1], [0, 8, 768]))), onesided.BoundsError),
        ((0, 1, Layout((4,), (0,))), onesided.ArgumentError),  # one element four times
        ((0, 1, typ(I8.Create_indexed_block(2, [0, 1]))), onesided.ArgumentError),  # overlapping blocks
    ]
    n = 0
    for kind, win, local in windows():
        for spec, error in bad:
            for op in ("Put", "Get", "Accumulate", "Get_accumulate"):
                target = (rank + 1) % size
                with win.lock(rank):
                    local[:] = initial(rank)
                comm.Barrier()
                count = spec[2].count if isinstance(spec[2], Layout) else spec[2].Get_size() // 8
                a, r = np.arange(count, dtype=np.int64), np.full(count, -1, np.int64)
                win.Lock_all()
                try:
                    if op == "Put":
                        win.Put(a, target, spec)
                    elif op == "Get":
                        win.Get(r, target, spec)
                    elif op == "Accumulate":
                        win.Accumulate(a, target, spec, onesided.SUM)
                    else:
                        win.Get_accumulate(a, r, target, spec, onesided.SUM)
                except error:
                    pass
                else:
                    raise AssertionError(f"{kind} {op} {spec} did not raise {error.__name__}")
                finally:
                    win.Unlock_all()
                comm.Barrier()
                win.Sync()
                assert np.array_equal(local, initial(rank)), f"{kind} {op} {spec}: the window changed: {local}"
                assert (r == -1).all(), f"{kind} {op} {spec}: the result changed: {r}"
                n += 1
        win.Free()
    return n


class Counter:
    """A shared counter that scales (the idea of mpi4py's nxtval-scalable
    demo), written for MPI.Win and run here on onesided.Window: rank 0
    exposes a binary tree of partial counts; each rank accumulates its
    increment along its own path through an indexed_block datatype and
    reads the sibling subtrees it needs through another, in one exclusive
    lock epoch."""

    def __init__(self, comm: Any, Win: Any) -> None:
        levels = max(1, (comm.Get_size() - 1).bit_length())
        mine, theirs, node, r = [], [], 0, comm.Get_rank()
        for level in reversed(range(levels)):
            half = 1 << level
            left, right = node + 1, node + 2 * half
            # my increments go down my side; what ranks on the other side
            # did is the count of the other subtree's root
            node, other = (left, right) if r < half else (right, left)
            mine.append(node)
            theirs.append(other)
            r %= half
        self.mem = np.zeros((1 << (levels + 1)) - 1, np.intc) if comm.Get_rank() == 0 else None
        self.win = Win.Create(self.mem, MPI.INT.Get_size(), MPI.INFO_NULL, comm)
        self.acc_type = MPI.INT.Create_indexed_block(1, mine).Commit()
        self.get_type = MPI.INT.Create_indexed_block(1, theirs).Commit()
        self.acc = np.zeros(len(mine), np.intc)
        self.got = np.zeros(len(theirs), np.intc)
        self.mine = 0

    def next(self, increment: int = 1) -> int:
        self.acc.fill(increment)
        self.win.Lock(0, MPI.LOCK_EXCLUSIVE)
        self.win.Get(self.got, 0, [0, 1, self.get_type])
        self.win.Accumulate(self.acc, 0, [0, 1, self.acc_type], MPI.SUM)
        self.win.Unlock(0)
        value = self.mine + int(self.got.sum())
        self.mine += increment
        return value

    def free(self) -> None:
        self.win.Free()
        self.acc_type.Free()
        self.get_type.Free()


def check_nxtval() -> int:
    counter = Counter(comm, Window)
    values = [counter.next() for _ in range(20)]
    counter.free()
    everything = sorted(v for vs in comm.allgather(values) for v in vs)
    assert everything == list(range(20 * size)), everything
    return len(everything)


def check_detached() -> int:
    """A strided put and get of many short pieces (piece messages on the
    provider path: paths/piece_runs.hpp) into memory the target Detached
    while the origin's epoch was open, so the origin still addresses it:
    the target's check of every piece refuses them, the origin's Flush
    raises an onesided.Error, and nothing is written at either end (the
    detached array keeps the target's own stores, the result its -1s)."""
    win = Window.Create_dynamic(info=harness.info(), comm=comm)
    mem = np.zeros((64, 8), np.int64)
    if rank == 1:
        win.Attach(mem)
    addr = comm.bcast(onesided.Get_address(mem) if rank == 1 else 0, root=1)
    column = (addr, 1, Layout.of(mem[:, 3], mem))
    a, r = np.arange(64, dtype=np.int64), np.full(64, -1, np.int64)
    n = 0
    if rank == 0:
        win.Lock_all()
        win.Put(a, 1, column)
        win.Flush(1)
        win.Get(r, 1, column)
        win.Flush(1)
        assert (r == a).all(), f"before the Detach: got {r}"
        r[:] = -1
    comm.Barrier()
    if rank == 1:
        win.Detach(mem)
        mem[:] = -7
    comm.Barrier()
    if rank == 0:
        for name, call in (("Put", lambda: win.Put(a + 1, 1, column)), ("Get", lambda: win.Get(r, 1, column))):
            try:
                call()
                win.Flush(1)
            except onesided.Error:
                n += 1
            else:
                raise AssertionError(f"a strided {name} into detached memory did not raise")
        win.Unlock_all()
        assert (r == -1).all(), f"the result was written: {r}"
    comm.Barrier()
    if rank == 1:
        assert (mem == -7).all(), f"detached memory was written: {mem}"
    win.Free()
    return comm.bcast(n, root=0)


CHECKS = {"layouts": check_layouts, "bounds": check_bounds, "nxtval": check_nxtval, "detached": check_detached}

if __name__ == "__main__":
    check = sys.argv[1]
    n = CHECKS[check]()
    for t in made:
        t.Free()
    comm.Barrier()
    if rank == 0:
        print(f"PASS {check} cases={n}", flush=True)
