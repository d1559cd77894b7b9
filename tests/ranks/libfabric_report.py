"""The README's ten-line example, then one JSON line per rank saying which
libfabric each library in the rank really runs on (tests/test_wheel.py,
tests/test_mpi_wheels.py).

Run from an installed wheel, not from the source tree: it imports nothing of
the tests. ``argv[1]``: ``onesided`` (no MPI), or ``onesided-first`` /
``mpi4py-first``: both imported in that order, and the window's group is
mpi4py's COMM_WORLD.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys

order = sys.argv[1]
if order == "mpi4py-first":
    from mpi4py import MPI
import onesided

if order == "onesided-first":
    from mpi4py import MPI

import numpy as np


def mapped() -> list[tuple[int, int, str]]:
    """(start, end, file) of every file-backed mapping of this process."""
    out = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) >= 6 and fields[5].startswith("/"):
                start, end = (int(x, 16) for x in fields[0].split("-"))
                out.append((start, end, fields[5]))
    return out


def file_at(address: int) -> str:
    return next((f for s, e, f in mapped() if s <= address < e), "")


comm = onesided.COMM_WORLD if order == "onesided" else MPI.COMM_WORLD
# The README's example.
win = onesided.Window.Allocate(8, disp_unit=8, comm=comm)
one, ticket = np.ones(1, np.int64), np.zeros(1, np.int64)
with win.lock_all():
    win.Fetch_and_op(one, ticket, 0)
    win.Flush(0)
win.Free()

lib = onesided.libfabric()
report = {
    "rank": comm.rank,
    "pid": os.getpid(),
    "ticket": int(ticket[0]),
    "onesided": {"path": lib.path, "chosen_by": lib.chosen_by, "version": list(lib.version)},
    "libfabric_files": sorted({f for _, _, f in mapped() if os.path.basename(f).startswith("libfabric")}),
}
if order != "onesided":
    # Where the MPI library's fi_getinfo lives: looked up through libmpi's
    # own handle (its dependencies, as its relocations resolved them).
    libmpi = next(f for _, _, f in mapped() if os.path.basename(f).startswith(("libmpi.so", "libmpi_abi.so")))
    handle = ctypes.CDLL(libmpi, mode=os.RTLD_NOLOAD | os.RTLD_GLOBAL)
    getinfo = ctypes.cast(handle.fi_getinfo, ctypes.c_void_p).value or 0
    handle.fi_version.restype = ctypes.c_uint32
    version = handle.fi_version()
    report["mpi"] = {
        "library": MPI.Get_library_version().splitlines()[0].strip(),
        "libmpi": libmpi,
        "libfabric": file_at(getinfo),
        "version": [version >> 16, version & 0xFFFF],
    }
print(json.dumps(report), flush=True)
