"""Parsing of mpi4py-style buffer and target specifications.

An origin or result is a buffer, ``(buf, count)``, ``(buf, dtype)`` or
``(buf, count, dtype)`` (lists work too, as in mpi4py); a target is ``None``,
an int displacement, or ``(disp[, count[, dtype]])``. onesided moves typed
elements without conversion, so a target's count and dtype must match the
origin's.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ._errors import ArgumentError
from ._types import dtype_code, dtype_of


class Message(NamedTuple):
    buffer: Any  # an object exporting the buffer protocol (kept alive until completion)
    count: int
    dtype: int  # table index


def _is_buffer(obj: Any) -> bool:
    if isinstance(obj, np.ndarray):
        return True
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


# numpy dtype -> table index, for the common case below.
_CODE_OF: dict[np.dtype, int] = {}


def message(spec: Any, *, writable: bool, what: str) -> Message:
    """Parse an origin/result spec into (buffer, count, dtype code), checking
    that the buffer is contiguous, writable when it must be, and big enough."""
    # The common case, a plain C-contiguous ndarray, in a few attribute reads
    # (this runs on every RMA call).
    if type(spec) is np.ndarray:
        flags = spec.flags
        code = _CODE_OF.get(spec.dtype)
        if code is not None and flags.c_contiguous and (flags.writeable or not writable):
            return Message(spec, spec.size, code)
    return _message(spec, writable, what)


def _message(spec: Any, writable: bool, what: str) -> Message:
    count: int | None = None
    dtype: Any = None
    buf = spec
    if isinstance(spec, (tuple, list)) and spec and (spec[0] is None or _is_buffer(spec[0])):
        buf, *rest = spec
        if len(rest) > 2:
            raise ArgumentError(f"{what}: expected buf, (buf, count), (buf, dtype) or (buf, count, dtype)")
        for item in rest:
            if isinstance(item, (int, np.integer)) and not isinstance(item, bool):
                count = int(item)
            else:
                dtype = item
    if buf is None:
        raise ArgumentError(f"{what} buffer is required")
    if isinstance(buf, np.ndarray):
        arr = buf
    else:
        try:
            memoryview(buf)
        except TypeError:
            raise ArgumentError(f"{what} must support the buffer protocol, got {type(buf).__name__}") from None
        arr = np.asarray(buf)
    if not (arr.flags.c_contiguous or arr.flags.f_contiguous):
        raise ArgumentError(f"{what} buffer must be contiguous (got a strided view)")
    if writable and not arr.flags.writeable:
        raise ArgumentError(f"{what} buffer is read-only")
    code = dtype_code(arr.dtype if dtype is None else dtype)
    if dtype is None:
        _CODE_OF[arr.dtype] = code
    itemsize = dtype_of(code).itemsize
    if count is None:
        count = arr.nbytes // itemsize
    if count < 0:
        raise ArgumentError(f"{what} count must be >= 0, got {count}")
    if count * itemsize > arr.nbytes:
        raise ArgumentError(
            f"{what} buffer holds {arr.nbytes} bytes but {count} x {dtype_of(code)} needs {count * itemsize}"
        )
    return Message(arr, count, code)


def target(spec: Any, origin: Message) -> int:
    """The target displacement of a target spec, after checking that its count
    and dtype (if given) match the origin's."""
    if spec is None:
        return 0
    if isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
        return int(spec)
    if isinstance(spec, (tuple, list)) and 1 <= len(spec) <= 3:
        disp = int(spec[0])
        if len(spec) >= 2 and spec[1] is not None and int(spec[1]) != origin.count:
            raise ArgumentError(
                f"target count {int(spec[1])} differs from origin count {origin.count} (onesided does not convert)"
            )
        if len(spec) == 3 and spec[2] is not None and dtype_code(spec[2]) != origin.dtype:
            raise ArgumentError(
                f"target dtype {spec[2]} differs from origin dtype {dtype_of(origin.dtype)} (onesided does not convert)"
            )
        return disp
    raise ArgumentError(f"target must be None, a displacement or (disp[, count[, dtype]]), got {spec!r}")


def same_dtype(a: Message, b: Message, what: str) -> None:
    """Rule for one-element calls: every buffer holds the same dtype."""
    if a.dtype != b.dtype:
        raise ArgumentError(f"{what}: dtypes differ ({dtype_of(a.dtype)} vs {dtype_of(b.dtype)})")


def same_shape(a: Message, b: Message, what: str) -> None:
    """Rule for multi-buffer calls: one dtype and one count for all."""
    same_dtype(a, b, what)
    if a.count != b.count:
        raise ArgumentError(f"{what}: counts differ ({a.count} vs {b.count})")
