"""Rank programs for tests/test_vectored_atomics.py: a strided
accumulate-style call on the provider path. Of a native dtype it goes as
vectored atomics, several stretches of the target per fi_fetch_atomicmsg
(paths/native_atomics.cpp); of a software dtype, in short chunks, as
AtomicRuns messages of many pieces each (paths/software_atomic_runs.cpp).
Rank 0 is the origin, rank 1 the target, on an `Allocate` window with the
shared-memory path off.

Each case applies one call through a target layout whose stretches are
single elements, runs of three, or runs longer than one native atomic
carries (so they are cut), from a contiguous or strided origin into a
contiguous or strided result;
rank 0 then reads the whole window back and compares it, and the fetched
values, with the same call applied by numpy: every element in the layout
changed as the op says, every element between stretches kept, every old
value in its place in the result.

Usage: vectored_atomics.py ROUTE, ROUTE one of native (the window's
default: every dtype here is native on shm and tcp), software
(onesided_atomics=software) and granular (software, with
mpi_accumulate_granularity 16: the target's lock is taken per two
float64s). Rank 0 prints "PASS ROUTE stretches=N cases=M", N the
stretches per operation the window reports."""

from __future__ import annotations

import re
import sys
from typing import Callable

import numpy as np

import harness
import onesided
from onesided import Layout, Window

comm = harness.comm()
rank = comm.Get_rank()
N = 8192  # elements of the target's window

# (name, shape, strides, offset) of the target layout, in elements.
LAYOUTS = [
    ("column", (1500,), (5,), 3),  # single elements: groups of the stretch limit
    ("runs of 3", (700, 3), (7, 1), 1),  # several elements per stretch
    ("long runs", (3, 1300), (2700, 1), 40),  # longer than one atomic carries: cut
]
# numpy's meaning of each op, (target, origin) -> new target.
OPS: dict[str, tuple[onesided.Op, Callable[[np.ndarray, np.ndarray], np.ndarray]]] = {
    "SUM": (onesided.SUM, lambda t, o: t + o),
    "MAX": (onesided.MAX, lambda t, o: np.maximum(t, o)),
    "REPLACE": (onesided.REPLACE, lambda t, o: o),
    "NO_OP": (onesided.NO_OP, lambda t, o: t),
}


def positions(shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> np.ndarray:
    """The target elements a layout addresses, in the order it walks them."""
    idx = np.full(shape, offset, np.int64)
    for axis, stride in enumerate(strides):
        span = np.arange(shape[axis], dtype=np.int64) * stride
        idx = idx + span.reshape([-1 if a == axis else 1 for a in range(len(shape))])
    return idx.ravel()


ROUTE = sys.argv[1]
INFO = {
    "native": {},
    "software": {"onesided_atomics": "software"},
    "granular": {"onesided_atomics": "software", "mpi_accumulate_granularity": "16"},
}[ROUTE]


def check(dtype: type) -> tuple[int, int]:
    size = np.dtype(dtype).itemsize
    win = Window.Allocate(N * size, size, info=harness.info(**INFO), comm=comm)
    harness.check_provider(win)
    info = win.Get_info()
    assert info["onesided_path"] == "provider", info["onesided_path"]
    # "mixed" by default: the pair dtypes (MINLOC/MAXLOC) are software everywhere.
    assert (info["atomics"] == "software") == (ROUTE != "native"), info["atomics"]
    mem = np.frombuffer(win.tomemory(), dtype)
    cases = 0
    for name, shape, strides, offset in LAYOUTS:
        for op_name, (op, apply) in OPS.items():
            for fetch, step in ((False, 1), (False, 3), (True, 1), (True, 3)):
                if op is onesided.NO_OP and not fetch:
                    continue  # Accumulate takes no NO_OP
                mem[:] = np.arange(N, dtype=dtype) % 251
                comm.Barrier()
                if rank == 0:
                    where = positions(shape, strides, offset)
                    count = where.size
                    # Contiguous origin and result (step 1: a stretch is a
                    # whole run), or every third element of the origin and
                    # every other of the result (a stretch is one element).
                    origin = np.zeros(step * count, dtype)
                    origin[::step] = (np.arange(count) * 7) % 300
                    # (A contiguous result starts 5 elements in, by a
                    # layout's offset: the core gets the buffer's start.)
                    result = np.full(2 * count, -1, dtype)
                    fetched = result[5 : 5 + count] if step == 1 else result[::2]
                    spec = [result, 1, Layout((count,), (1,), 5, dtype=dtype)] if step == 1 else fetched
                    layout = Layout(shape, strides, offset, dtype=dtype)
                    win.Lock(1)
                    if fetch:
                        win.Get_accumulate(origin[::step], spec, 1, (0, 1, layout), op)
                    else:
                        win.Accumulate(origin[::step], 1, (0, 1, layout), op)
                    win.Flush(1)
                    after = np.empty(N, dtype)
                    win.Get(after, 1)
                    win.Unlock(1)
                    expected = np.arange(N, dtype=dtype) % 251
                    old = expected[where].copy()
                    expected[where] = apply(old, origin[::step])
                    what = f"{np.dtype(dtype).name} {name} {op_name} fetch={fetch} step={step}"
                    assert np.array_equal(after, expected), (what, np.flatnonzero(after != expected)[:8])
                    if fetch:
                        assert np.array_equal(fetched, old), (what, "old values")
                        rest = np.concatenate([result[:5], result[5 + count :]]) if step == 1 else result[1::2]
                        assert (rest == -1).all(), (what, "result written outside its elements")
                    cases += 1
                comm.Barrier()
    described = re.search(r"(\d+) stretch\(es\) per operation", win.Get_info()["onesided_put_get"])
    win.Free()
    return (int(described.group(1)) if described else 0), cases


stretches = cases = 0
for dtype in (np.float64, np.int32):
    stretches, n = check(dtype)
    cases += n
if rank == 0:
    print(f"PASS {ROUTE} stretches={stretches} cases={cases}", flush=True)
