"""onesided: MPI-style one-sided communication (RMA) over libfabric.

Windows of memory that every rank exposes, with put, get, atomic accumulate,
fetch-and-op and compare-and-swap, synchronised by fence or passive-target
locks. The API mirrors mpi4py's ``MPI.Win``; any mpi4py communicator can be a
window's group, and without MPI ``python -m onesided run -n N script.py``
starts N ranks on this machine. In a plain process (a notebook) COMM_WORLD is
a world of size 1.
"""

from __future__ import annotations

import atexit

from . import _core
from ._errors import (
    ArgumentError,
    BoundsError,
    EpochError,
    Error,
    InternalError,
    OpSetError,
    TransportError,
    UnsupportedError,
)
from ._types import OPS, Op
from ._window import (
    FLAVOR_ALLOCATE,
    FLAVOR_CREATE,
    LOCK_EXCLUSIVE,
    LOCK_SHARED,
    MODE_NOCHECK,
    MODE_NOPRECEDE,
    MODE_NOPUT,
    MODE_NOSTORE,
    MODE_NOSUCCEED,
    WIN_SEPARATE,
    WIN_UNIFIED,
    Window,
)
from ._world import Comm, WorldError, world

__version__ = "0.1.0"

COMM_WORLD: Comm = world()

# The MPI reduction ops, named as in mpi4py (onesided.SUM is MPI.SUM).
SUM: Op = OPS["sum"]
PROD: Op = OPS["prod"]
MAX: Op = OPS["max"]
MIN: Op = OPS["min"]
BAND: Op = OPS["band"]
BOR: Op = OPS["bor"]
BXOR: Op = OPS["bxor"]
LAND: Op = OPS["land"]
LOR: Op = OPS["lor"]
LXOR: Op = OPS["lxor"]
REPLACE: Op = OPS["replace"]
NO_OP: Op = OPS["no_op"]

# Progress threads must stop before the interpreter (and libfabric) go away.
atexit.register(_core.shutdown)

__all__ = [
    "COMM_WORLD",
    "Comm",
    "Window",
    "Op",
    "Error",
    "ArgumentError",
    "BoundsError",
    "EpochError",
    "UnsupportedError",
    "OpSetError",
    "TransportError",
    "InternalError",
    "WorldError",
    "SUM",
    "PROD",
    "MAX",
    "MIN",
    "BAND",
    "BOR",
    "BXOR",
    "LAND",
    "LOR",
    "LXOR",
    "REPLACE",
    "NO_OP",
    "LOCK_EXCLUSIVE",
    "LOCK_SHARED",
    "MODE_NOCHECK",
    "MODE_NOSTORE",
    "MODE_NOPUT",
    "MODE_NOPRECEDE",
    "MODE_NOSUCCEED",
    "FLAVOR_CREATE",
    "FLAVOR_ALLOCATE",
    "WIN_UNIFIED",
    "WIN_SEPARATE",
]
