"""onesided: MPI-style one-sided communication (RMA) over libfabric.

Windows of memory that every rank exposes, with put, get, atomic accumulate,
fetch-and-op and compare-and-swap, synchronised by fence or passive-target
locks. The API mirrors mpi4py's ``MPI.Win``; any mpi4py communicator can be a
window's group, and without MPI ``python -m onesided run -n N script.py``
starts N ranks on this machine (``--hosts``/``--hostfile``: across hosts).
Under an MPI launcher COMM_WORLD is mpi4py's ``MPI.COMM_WORLD`` itself; in a
plain process (a notebook) it is a world of size 1.
"""

from __future__ import annotations

import atexit
import os
from typing import Any

import numpy as np

from .boot._crash_signals import keep_signals_visible

# Before the core (and with it libfabric and libinfinipath) is loaded: a
# crashing or killed rank must die of its signal, not exit(1) with a .btr file.
keep_signals_visible()

from . import _core, _errors

# ONESIDED_NATIVE_BACKTRACE=1: a thread that faults writes its native frames
# to stderr before the signal goes on (docs/semantics.md, "A rank that
# faults"); the test suite sets it for every process it starts.
if os.environ.get("ONESIDED_NATIVE_BACKTRACE", "0") not in ("", "0"):
    _core._report_fatal_signals()
from .boot._libfabric import Libfabric, load as libfabric

# Now, not at the first window: a libfabric that ONESIDED_LIBFABRIC names but
# cannot be loaded fails the import, and a later `import mpi4py.MPI` finds
# onesided's copy already in place under its private name.
libfabric()
from ._errors import (
    ArgumentError,
    ArgumentTypeError,
    BufferArgumentError,
    BoundsError,
    EpochError,
    Error,
    InternalError,
    OpSetError,
    RaceError,
    RaceWarning,
    TransportError,
    UnsupportedError,
)
from ._types import OPS, PAIR_DTYPES, RMW2_OPS, RMW_OPS, Op
from .args._layout import Layout
from .window._alloc_mem import Alloc_mem, Free_mem
from .window._mpi_objects import Get_address
from .comm import _exit_deadline
from .comm._comm import Comm, WorldError
from .comm._world import world
from .notebook._ranks import CellError, RankResult, Ranks, RanksError
from .run._spawn import LaunchError, launch
from .window._atomics_report import AtomicPath, AtomicsReport, Executor
from .window._constants import (
    FLAVOR_ALLOCATE,
    FLAVOR_CREATE,
    FLAVOR_DYNAMIC,
    FLAVOR_SHARED,
    KEYVAL_INVALID,
    PROC_NULL,
    WIN_BASE,
    WIN_CREATE_FLAVOR,
    WIN_DISP_UNIT,
    WIN_MODEL,
    WIN_SIZE,
    LOCK_EXCLUSIVE,
    LOCK_SHARED,
    MODE_NOCHECK,
    MODE_NOPRECEDE,
    MODE_NOPUT,
    MODE_NOSTORE,
    MODE_NOSUCCEED,
    MODE_PASSIVE_EPOCH_IMPLICIT,
    WIN_SEPARATE,
    WIN_UNIFIED,
)
from .window._mpi_objects import Group, Info, buffer
from .window._null_window import NullWindow
from .window._request import Request
from .window._window import Window

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """``COMM_WORLD``, built on first read (PEP 562) and then a plain attribute.

    Not at import: in a rank of an MPI job the world is mpi4py's
    ``MPI.COMM_WORLD``, and importing mpi4py initialises MPI, which a program
    may want to configure (``mpi4py.rc``) after ``import onesided``. Without
    mpi4py there, every read raises ``WorldError`` (never a world of one).
    """
    if name == "COMM_WORLD":
        comm = world()
        globals()["COMM_WORLD"] = comm
        return comm
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names, ``COMM_WORLD`` included before its first read."""
    return sorted({*globals(), "COMM_WORLD"})


# The null window (mpi4py's MPI.WIN_NULL): Window() is equal to it (a new null window, as MPI.Win()).
WIN_NULL: NullWindow = Window()

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
MAXLOC: Op = OPS["maxloc"]
MINLOC: Op = OPS["minloc"]

# MPI's value-and-index pairs for MAXLOC and MINLOC, as numpy records (mpi4py's
# names; MPI.DOUBLE_INT is accepted as it is, and so is any record of the same
# layout whatever its field names).
SHORT_INT: np.dtype = PAIR_DTYPES["SHORT_INT"]
TWOINT: np.dtype = PAIR_DTYPES["TWOINT"]
INT_INT: np.dtype = TWOINT  # mpi4py's alias
LONG_INT: np.dtype = PAIR_DTYPES["LONG_INT"]
FLOAT_INT: np.dtype = PAIR_DTYPES["FLOAT_INT"]
DOUBLE_INT: np.dtype = PAIR_DTYPES["DOUBLE_INT"]
LONG_DOUBLE_INT: np.dtype = PAIR_DTYPES["LONG_DOUBLE_INT"]

# Seed 002's generalised read-modify-write ops (Window.Rmw / Rmw2).
RMW_INC: Op = RMW_OPS["RMW_INC"]
RMW_SUM: Op = RMW_OPS["RMW_SUM"]
RMW_PROD: Op = RMW_OPS["RMW_PROD"]
RMW_LAND: Op = RMW_OPS["RMW_LAND"]
RMW_LOR: Op = RMW_OPS["RMW_LOR"]
RMW_LXOR: Op = RMW_OPS["RMW_LXOR"]
RMW_BAND: Op = RMW_OPS["RMW_BAND"]
RMW_BOR: Op = RMW_OPS["RMW_BOR"]
RMW_BXOR: Op = RMW_OPS["RMW_BXOR"]
RMW_SWAP: Op = RMW_OPS["RMW_SWAP"]
RMW_MIN: Op = RMW_OPS["RMW_MIN"]
RMW_MAX: Op = RMW_OPS["RMW_MAX"]
RMW2_MASK_SWAP: Op = RMW2_OPS["RMW2_MASK_SWAP"]
RMW2_COMP_SWAP_LT: Op = RMW2_OPS["RMW2_COMP_SWAP_LT"]
RMW2_COMP_SWAP_LE: Op = RMW2_OPS["RMW2_COMP_SWAP_LE"]
RMW2_COMP_SWAP_EQ: Op = RMW2_OPS["RMW2_COMP_SWAP_EQ"]
RMW2_COMP_SWAP_GE: Op = RMW2_OPS["RMW2_COMP_SWAP_GE"]
RMW2_COMP_SWAP_GT: Op = RMW2_OPS["RMW2_COMP_SWAP_GT"]
RMW2_COMP_SWAP_NE: Op = RMW2_OPS["RMW2_COMP_SWAP_NE"]


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext onesided``: add the ``%%ranks`` cell magic (ranks that live
    across cells; see :class:`Ranks`). IPython is imported only here."""
    from .notebook._ranks_magic import load_ipython_extension as load

    load(ipython)  # type: ignore[arg-type]


# Progress threads must stop before the interpreter (and libfabric) go away.
atexit.register(_core.shutdown)
# A rank dying on an uncaught exception must not wait at exit for peers that
# will never come (MPI_Finalize): comm/_exit_deadline.py.
_exit_deadline.install()

__all__ = [
    "COMM_WORLD",
    "Comm",
    "Window",
    "WIN_NULL",
    "NullWindow",
    "Request",
    "Layout",
    "Info",
    "Group",
    "buffer",
    "WIN_BASE",
    "WIN_SIZE",
    "WIN_DISP_UNIT",
    "WIN_CREATE_FLAVOR",
    "WIN_MODEL",
    "KEYVAL_INVALID",
    "AtomicPath",
    "AtomicsReport",
    "Executor",
    "MODE_PASSIVE_EPOCH_IMPLICIT",
    "RMW_INC",
    "RMW_SUM",
    "RMW_PROD",
    "RMW_LAND",
    "RMW_LOR",
    "RMW_LXOR",
    "RMW_BAND",
    "RMW_BOR",
    "RMW_BXOR",
    "RMW_SWAP",
    "RMW_MIN",
    "RMW_MAX",
    "RMW2_MASK_SWAP",
    "RMW2_COMP_SWAP_LT",
    "RMW2_COMP_SWAP_LE",
    "RMW2_COMP_SWAP_EQ",
    "RMW2_COMP_SWAP_GE",
    "RMW2_COMP_SWAP_GT",
    "RMW2_COMP_SWAP_NE",
    "Op",
    *_errors.__all__,
    "WorldError",
    "Libfabric",
    "libfabric",
    "LaunchError",
    "launch",
    "Ranks",
    "RankResult",
    "CellError",
    "RanksError",
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
    "MAXLOC",
    "MINLOC",
    "SHORT_INT",
    "TWOINT",
    "INT_INT",
    "LONG_INT",
    "FLOAT_INT",
    "DOUBLE_INT",
    "LONG_DOUBLE_INT",
    "LOCK_EXCLUSIVE",
    "LOCK_SHARED",
    "MODE_NOCHECK",
    "MODE_NOSTORE",
    "MODE_NOPUT",
    "MODE_NOPRECEDE",
    "MODE_NOSUCCEED",
    "FLAVOR_CREATE",
    "FLAVOR_ALLOCATE",
    "FLAVOR_SHARED",
    "FLAVOR_DYNAMIC",
    "PROC_NULL",
    "Get_address",
    "Alloc_mem",
    "Free_mem",
    "WIN_UNIFIED",
    "WIN_SEPARATE",
]
