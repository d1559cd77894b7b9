"""mpi4py compatibility: the argument translations that let code written for
``MPI.Win`` pass its own objects unchanged.

Each function takes what an mpi4py program passes (``MPI.MODE_*`` bits,
``MPI.LOCK_*``, ``MPI.Info``, ``MPI.Group``, ``MPI.PROC_NULL``, a
communicator) or onesided's own equivalent, and returns onesided's value.
mpi4py is never imported here: its objects are recognised only when the
program has imported ``mpi4py.MPI`` itself. Buffer and op translation live
in :mod:`onesided._buffers` and :mod:`onesided._types`.
"""

from __future__ import annotations

import sys
from typing import Any, Mapping

import numpy as np

from . import _core
from ._errors import ArgumentError
from ._world import world

_MODES = ("NOCHECK", "NOSTORE", "NOPUT", "NOPRECEDE", "NOSUCCEED")


def assertion(value: int) -> int:
    """Assertion bits, translating mpi4py's MPI.MODE_* when its MPI numbers
    them differently from onesided (Open MPI does; MPICH does not)."""
    value = int(value)
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is None or value == 0:
        return value
    out = 0
    for name in _MODES:
        theirs, ours = int(getattr(mpi, "MODE_" + name)), getattr(_core, "MODE_" + name)
        if theirs == ours:
            continue
        if value & theirs:
            out |= ours
            value &= ~theirs
    return out | value


def lock_type(value: int) -> int:
    """LOCK_EXCLUSIVE or LOCK_SHARED, from onesided's or mpi4py's constant."""
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None:
        if value == mpi.LOCK_EXCLUSIVE:
            return _core.LOCK_EXCLUSIVE
        if value == mpi.LOCK_SHARED:
            return _core.LOCK_SHARED
    if value not in (_core.LOCK_EXCLUSIVE, _core.LOCK_SHARED):
        raise ArgumentError(f"lock_type must be LOCK_EXCLUSIVE or LOCK_SHARED, got {value!r}")
    return int(value)


def rank(value: int) -> int:
    """A rank, with mpi4py's MPI.PROC_NULL turned into onesided's PROC_NULL."""
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None and value == mpi.PROC_NULL:
        return _core.PROC_NULL
    return int(value)


def info_dict(info: Any) -> dict[str, str]:
    """A plain dict from None, a mapping, or an mpi4py MPI.Info."""
    if info is None:
        return {}
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None and isinstance(info, mpi.Info):
        if info == mpi.INFO_NULL:
            return {}
        return {str(k): str(v) for k, v in info.items()}
    if isinstance(info, Mapping):
        return {str(k): str(v) for k, v in info.items()}
    raise ArgumentError(f"info must be a dict or an mpi4py MPI.Info, got {type(info).__name__}")


def group_ranks(group: Any, comm: Any) -> list[int]:
    """Ranks of the window's communicator from a list/tuple/range of ranks
    or an mpi4py MPI.Group (translated into the communicator's group)."""
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None and isinstance(group, mpi.Group):
        if not hasattr(comm, "Get_group"):
            raise ArgumentError("an MPI.Group needs a window over an mpi4py communicator; pass a list of ranks")
        mine = comm.Get_group()
        try:
            ranks = mpi.Group.Translate_ranks(group, list(range(group.Get_size())), mine)
        finally:
            mine.Free()
        if any(r == mpi.UNDEFINED for r in ranks):
            raise ArgumentError("the group holds processes outside the window's communicator")
        return [int(r) for r in ranks]
    try:
        return [int(r) for r in group]
    except TypeError:
        raise ArgumentError(f"group must be a list of ranks or an mpi4py MPI.Group, got {type(group).__name__}") from None


def communicator(comm: Any) -> Any:
    """The window's communicator: onesided.COMM_WORLD for None, else any
    object with mpi4py's communicator names (MPI.COMM_NULL is refused)."""
    if comm is None:
        return world()
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None and isinstance(comm, mpi.Comm) and comm == mpi.COMM_NULL:
        raise ArgumentError("comm is MPI.COMM_NULL")
    for name in ("Get_rank", "Get_size", "allgather", "Barrier"):
        if not hasattr(comm, name):
            raise ArgumentError(f"comm must be an mpi4py communicator or onesided.COMM_WORLD (no {name})")
    return comm


def Get_address(location: Any) -> int:
    """The absolute address of the first byte of a buffer (mpi4py's
    ``MPI.Get_address``): the target displacement of memory attached to a
    dynamic window."""
    try:
        view = memoryview(location)
    except TypeError:
        raise ArgumentError(f"Get_address needs a buffer, got {type(location).__name__}") from None
    address: int = np.asarray(view).__array_interface__["data"][0]
    return address
