"""A loop of Accumulate calls in a world of one, on the shared-memory path,
for counting instructions per element with callgrind (docs/performance.md,
"Strided accumulates"): run it with two call counts and divide the
difference.

    PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        python tools/accumulate_instructions.py SHAPE CALLS [OP [DTYPE]]

SHAPE: "contiguous" (65536 elements from the window's start) or "column"
(column 63 of a 1024 x 64 array). OP: sum, max or replace; DTYPE a numpy
name (default float64)."""

import sys

import numpy as np

import onesided
from onesided import Layout


def main() -> None:
    shape, calls = sys.argv[1], int(sys.argv[2])
    op = {"sum": onesided.SUM, "max": onesided.MAX, "replace": onesided.REPLACE}[sys.argv[3] if len(sys.argv) > 3
                                                                                 else "sum"]
    dtype = np.dtype(sys.argv[4] if len(sys.argv) > 4 else "float64")
    if shape == "contiguous":
        n = 65536
        win = onesided.Window.Allocate(n * dtype.itemsize, dtype.itemsize)
        src = np.ones(n, dtype)
        target = None
    else:
        rows = 1024
        win = onesided.Window.Allocate(rows * 64 * dtype.itemsize, dtype.itemsize)
        src = np.ones((rows, 64), dtype)[:, 0]
        target = (0, 1, Layout((rows,), (64,), 63, dtype=dtype))
    assert win.Get_info()["onesided_path"] == "shared-memory", win.Get_info()["onesided_path"]
    win.Lock_all()
    for _ in range(calls):
        win.Accumulate(src, 0, target, op)
    win.Unlock_all()
    win.Free()


if __name__ == "__main__":
    main()
