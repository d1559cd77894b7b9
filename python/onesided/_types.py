"""Ops and dtypes, derived from the C++ op x dtype table (never a copy of it).

``Op`` values are the table's indices; ``dtype_code`` maps a numpy dtype to the
table's dtype index. mpi4py's ``MPI.Op`` and ``MPI.Datatype`` objects are
translated here, so code written for mpi4py passes them unchanged.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from . import _core
from ._errors import ArgumentTypeError, UnsupportedError


class Op(int):
    """A reduction or read-modify-write operation (an index into the op table)."""

    name: str

    def __new__(cls, code: int, name: str) -> "Op":
        self = super().__new__(cls, code)
        self.name = name
        return self

    def __repr__(self) -> str:
        return f"onesided.{self.name}"

    __str__ = __repr__

    def __reduce__(self) -> tuple[Any, ...]:
        return (Op, (int(self), self.name))


_core._set_op_type(Op)  # the bindings' shortcut forms take ops of exactly this type

OPS: dict[str, Op] = {name: Op(code, name.upper()) for code, (name, _) in enumerate(_core.ops())}
OPERANDS: dict[int, int] = {code: n for code, (_, n) in enumerate(_core.ops())}

# Seed 002's generalised read-modify-write ops, as aliases of table ops.
RMW_OPS: dict[str, Op] = {
    f"RMW_{name.upper()}": Op(int(OPS[table]), f"RMW_{name.upper()}")
    for name, table in [("inc", "inc"), ("sum", "sum"), ("prod", "prod"), ("land", "land"), ("lor", "lor"),
                        ("lxor", "lxor"), ("band", "band"), ("bor", "bor"), ("bxor", "bxor"),
                        ("swap", "replace"), ("min", "min"), ("max", "max")]
}
RMW2_OPS: dict[str, Op] = {
    f"RMW2_{name.upper()}": Op(int(OPS[name]), f"RMW2_{name.upper()}")
    for name in ["mask_swap", "comp_swap_lt", "comp_swap_le", "comp_swap_eq", "comp_swap_ge", "comp_swap_gt",
                 "comp_swap_ne"]
}


def _pair_record(value: np.dtype, index_offset: int, itemsize: int) -> np.dtype:
    # MPI's pair types as C lays out struct { value; int index; }: the
    # record numpy's align=True makes, and mpi4py's dtlib too.
    return np.dtype({"names": ["value", "index"], "formats": [value, np.int32], "offsets": [0, index_offset],
                     "itemsize": itemsize})


_NAMES: list[str] = [name for name, _ in _core.dtypes()]
_PAIRS: dict[int, tuple[int, int, int]] = {code: (value, offset, size) for code, value, offset, size in _core.pairs()}


def _numpy_dtype(code: int) -> np.dtype:
    if code in _PAIRS:
        value, offset, size = _PAIRS[code]
        return _pair_record(np.dtype(_NAMES[value]), offset, size)
    return np.dtype(_NAMES[code])


def _key(dt: np.dtype) -> Any:
    if dt.fields is None:
        return (dt.kind, dt.itemsize)
    fields = sorted(dt.fields.values(), key=lambda f: f[1])
    return (tuple((f[0].kind, f[0].itemsize, f[1]) for f in fields), dt.itemsize)


_DTYPES: list[np.dtype] = [_numpy_dtype(code) for code in range(len(_NAMES))]

# MPI's pair types as numpy records, by mpi4py's names (the table names them
# so: twoint is MPI.TWOINT); onesided.DOUBLE_INT, ... are these.
PAIR_DTYPES: dict[str, np.dtype] = {_NAMES[code].upper(): _DTYPES[code] for code in _PAIRS}
# Keyed by (kind, itemsize) so that aliases (np.longlong vs np.int64) agree;
# a pair by its fields' (kind, itemsize, offset) and its itemsize, whatever
# the fields' names (mpi4py's records and the user's own alike).
_CODES: dict[Any, int] = {_key(d): i for i, d in enumerate(_DTYPES)}


def dtype_of(code: int) -> np.dtype:
    return _DTYPES[code]


# numpy dtypes, scalar types (np.int64, float) and dtype strings already
# seen -> table index: the full paths look them up on every call.
_KNOWN: dict[Any, int] = {}


def dtype_code(dtype: Any) -> int:
    """The table index of a numpy dtype (or anything np.dtype accepts, or an
    mpi4py Datatype). Raises UnsupportedError for dtypes onesided cannot move
    atomically (float16, object, non-native byte order, records other than
    MPI's pairs)."""
    cacheable = isinstance(dtype, (np.dtype, type, str))
    if cacheable:
        known = _KNOWN.get(dtype)
        if known is not None:
            return known
    code = _dtype_code(dtype)
    if cacheable:
        _KNOWN[dtype] = code
    return code


def _dtype_code(dtype: Any) -> int:
    if isinstance(dtype, str) and dtype in _NAMES:  # the table's own names ("double_int")
        return _NAMES.index(dtype)
    dt = _to_numpy_dtype(dtype)
    if not dt.isnative:
        raise UnsupportedError(f"dtype {dt} is not in native byte order")
    code = _CODES.get(_key(dt))
    if code is None:
        supported = ", ".join(_NAMES)
        pairs = ", ".join(f"{_NAMES[c]} {_DTYPES[c]}" for c in _PAIRS)
        raise UnsupportedError(f"dtype {dt} is not supported (supported: {supported}; the pairs are the records "
                               f"{pairs}, field names free)")
    return code


def _to_numpy_dtype(dtype: Any) -> np.dtype:
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None and isinstance(dtype, mpi.Datatype):
        from mpi4py.util import dtlib

        return dtlib.to_numpy_dtype(dtype)
    if dtype is None or isinstance(dtype, (tuple, list, dict)):
        # np.dtype would take None as float64 and tuples/lists/dicts as
        # subarray or structured dtypes: never what an RMA call means.
        raise ArgumentTypeError(f"not a dtype: {dtype!r:.80}")
    try:
        return np.dtype(dtype)
    except (TypeError, ValueError) as e:
        raise ArgumentTypeError(f"not a dtype: {dtype!r:.80}") from e


def op_code(op: Any) -> int:
    """The table index of an onesided Op or an mpi4py MPI.Op. Plain ints (and
    bools, strings, ...) are refused: ``op=1`` is a bug, not PROD."""
    if type(op) is Op:
        return int(op)
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None and isinstance(op, mpi.Op):
        for name, ours in OPS.items():
            theirs = getattr(mpi, name.upper(), None)
            if theirs is not None and op == theirs:
                # Later calls with this object take the bindings' shortcut forms.
                _core._remember_op(op, int(ours))
                return int(ours)
        raise UnsupportedError(f"mpi4py op {op!r} has no onesided equivalent (user-defined ops are not supported)")
    raise ArgumentTypeError(f"not an op: {op!r:.60} ({type(op).__name__}; use onesided.SUM, ... or an mpi4py MPI.Op)")
