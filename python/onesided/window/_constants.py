"""The window's constants (the core's numbers, the names of ``MPI.Win``'s
module-level constants) and how mpi4py's numbers map to onesided's."""

from __future__ import annotations

import sys
from typing import Any

from .. import _core

LOCK_EXCLUSIVE: int = _core.LOCK_EXCLUSIVE
LOCK_SHARED: int = _core.LOCK_SHARED
MODE_NOCHECK: int = _core.MODE_NOCHECK
MODE_NOSTORE: int = _core.MODE_NOSTORE
MODE_NOPUT: int = _core.MODE_NOPUT
MODE_NOPRECEDE: int = _core.MODE_NOPRECEDE
MODE_NOSUCCEED: int = _core.MODE_NOSUCCEED
MODE_PASSIVE_EPOCH_IMPLICIT: int = _core.MODE_PASSIVE_EPOCH_IMPLICIT
FLAVOR_CREATE: int = _core.FLAVOR_CREATE
FLAVOR_ALLOCATE: int = _core.FLAVOR_ALLOCATE
FLAVOR_DYNAMIC: int = _core.FLAVOR_DYNAMIC
FLAVOR_SHARED: int = _core.FLAVOR_SHARED
PROC_NULL: int = _core.PROC_NULL
WIN_UNIFIED: int = _core.WIN_UNIFIED
WIN_SEPARATE: int = _core.WIN_SEPARATE

# The predefined attribute keys of Get_attr (MPICH's numbers; mpi4py's
# MPI.WIN_* keys are recognised too, whatever their numbers), and the value
# Free_keyval returns.
WIN_BASE: int = 0x66000001
WIN_SIZE: int = 0x66000003
WIN_DISP_UNIT: int = 0x66000005
WIN_CREATE_FLAVOR: int = 0x66000007
WIN_MODEL: int = 0x66000009
KEYVAL_INVALID: int = 0x24000000


def _mpi() -> Any:
    """mpi4py.MPI when the program imported it (never imported here)."""
    return sys.modules.get("mpi4py.MPI")


