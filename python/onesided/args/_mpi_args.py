"""mpi4py compatibility: the argument translations that let code written for
``MPI.Win`` pass its own objects unchanged.

Each function takes what an mpi4py program passes (``MPI.MODE_*`` bits,
``MPI.LOCK_*``, ``MPI.Info``, ``MPI.Group``, ``MPI.PROC_NULL``, a
communicator) or onesided's own equivalent, and returns onesided's value.
mpi4py is never imported here: its objects are recognised only when the
program has imported ``mpi4py.MPI`` itself. Buffer and op translation live
in :mod:`onesided.args._buffers` and :mod:`onesided._types`.
"""

from __future__ import annotations

import sys
from typing import Any, Mapping

from .. import _core
from .._errors import ArgumentError, ArgumentTypeError, Error
from ..comm._world import world
from ._integers import INT32_MAX, INT32_MIN, INT64_MAX, integer

_MODES = ("NOCHECK", "NOSTORE", "NOPUT", "NOPRECEDE", "NOSUCCEED")


_KNOWN_MODES = 0
for _name in _MODES:
    _KNOWN_MODES |= getattr(_core, "MODE_" + _name)
_KNOWN_MODES |= _core.MODE_PASSIVE_EPOCH_IMPLICIT


def assertion(value: Any) -> int:
    """Assertion bits: 0 or an OR of MODE_* bits (onesided's or mpi4py's
    MPI.MODE_*, translated when its MPI numbers them differently from
    onesided: Open MPI does, MPICH does not). Any other bit is an error."""
    if type(value) is int and value == 0:
        return 0
    value = integer(value, "assertion", 0, INT32_MAX)
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None and value:
        out = 0
        for name in _MODES:
            theirs, ours = int(getattr(mpi, "MODE_" + name)), getattr(_core, "MODE_" + name)
            if theirs == ours:
                continue
            if value & theirs:
                out |= ours
                value &= ~theirs
        value |= out
    if value & ~_KNOWN_MODES:
        raise ArgumentError(
            f"assertion {value:#x} has bits that are no MODE_* constant ({value & ~_KNOWN_MODES:#x}); use 0 or an OR "
            "of MODE_NOCHECK, MODE_NOSTORE, MODE_NOPUT, MODE_NOPRECEDE, MODE_NOSUCCEED, MODE_PASSIVE_EPOCH_IMPLICIT"
        )
    return value


def lock_type(value: Any) -> int:
    """LOCK_EXCLUSIVE or LOCK_SHARED, from onesided's or mpi4py's constant."""
    value = integer(value, "lock_type")
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None:
        if value == mpi.LOCK_EXCLUSIVE:
            return _core.LOCK_EXCLUSIVE
        if value == mpi.LOCK_SHARED:
            return _core.LOCK_SHARED
    if value not in (_core.LOCK_EXCLUSIVE, _core.LOCK_SHARED):
        raise ArgumentError(f"lock_type must be LOCK_EXCLUSIVE or LOCK_SHARED, got {value!r}")
    return value


def rank(value: Any, what: str = "rank") -> int:
    """A rank as an int in 32 bits (the core's ``int``), with mpi4py's
    MPI.PROC_NULL turned into onesided's PROC_NULL. Whether it is in the
    window's group is the core's check (ArgumentError naming the group size)."""
    value = integer(value, what)
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None and value == mpi.PROC_NULL:
        return _core.PROC_NULL
    if not INT32_MIN <= value <= INT32_MAX:
        raise ArgumentError(f"{what} {value} is not a rank of the window's group")
    return value


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
        for k, v in info.items():
            if type(k) is not str or type(v) is not str:
                raise ArgumentTypeError(
                    f"info keys and values must be str (as in MPI_Info), got {k!r}: {v!r:.60} "
                    f"({type(k).__name__}: {type(v).__name__})"
                )
        return dict(info)
    raise ArgumentTypeError(f"info must be a dict or an mpi4py MPI.Info, got {type(info).__name__}")


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
    if not isinstance(group, (list, tuple, range)):
        raise ArgumentTypeError(
            f"group must be a list, tuple or range of ranks or an mpi4py MPI.Group, got {type(group).__name__}"
        )
    # Integers in 32 bits here; membership of the window's group (and no
    # rank twice) is the core's check.
    return [integer(r, "group member", INT32_MIN, INT32_MAX) for r in group]


def creation(memory: Any, disp_unit: Any, info: Any, comm: Any, flavor: int) -> tuple[Any, int, dict[str, str]]:
    """Collective-safe checks of a window constructor's own arguments:
    ``(memory, disp_unit, info)`` as the core takes them. ``memory`` is the
    buffer to expose (FLAVOR_CREATE), the size in bytes (FLAVOR_ALLOCATE,
    FLAVOR_SHARED) or None (FLAVOR_DYNAMIC); ``comm`` is a checked
    communicator (:func:`communicator`).

    Creation is collective: a rank that finds its own arguments bad must not
    raise alone while the others wait in the core's first agreement. So a bad
    argument here is handed to the core's ``fail_creation``, which takes part
    in that agreement and raises the same error (class and message) at every
    rank of ``comm``, this one included."""
    try:
        if flavor == _core.FLAVOR_CREATE:
            from ._buffers import window_memory

            memory = window_memory(memory)
        elif flavor in (_core.FLAVOR_ALLOCATE, _core.FLAVOR_SHARED):
            memory = integer(memory, "size", 0, INT64_MAX)
        disp_unit = integer(disp_unit, "disp_unit", 1, INT32_MAX)
        info = info_dict(info)
    except Error as e:
        _core._fail_creation(comm, _core.ERROR_CODES.get(type(e).__name__, 0), str(e))
        raise  # not reached: _fail_creation raised at every rank
    return memory, disp_unit, info


def communicator(comm: Any) -> Any:
    """The window's communicator: onesided.COMM_WORLD for None, else any
    object with mpi4py's communicator names (MPI.COMM_NULL is refused). In a
    rank of an MPI job onesided.COMM_WORLD is mpi4py's (onesided.comm._mpi_job)."""
    if comm is None:
        comm = world()
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None and isinstance(comm, mpi.Comm) and comm == mpi.COMM_NULL:
        raise ArgumentError("comm is MPI.COMM_NULL")
    for name in ("Get_rank", "Get_size", "allgather", "Barrier"):
        if not hasattr(comm, name):
            raise ArgumentError(f"comm must be an mpi4py communicator or onesided.COMM_WORLD (no {name})")
    return comm
