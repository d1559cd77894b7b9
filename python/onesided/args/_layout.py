"""``onesided.Layout``: where a call's elements lie, in numpy's terms.

A layout is a shape and element strides from an element offset: the
elements ``offset + sum(i_k * strides[k])``, ``0 <= i_k < shape[k]``,
visited in C order (last index fastest), as numpy visits a view with that
shape and those strides. It describes a strided region of the target's
window without MPI: ``win.Put(a[:, 0], 1, target=(0, 1, Layout.of(b[:, -1], b)))``
writes a column of ``a`` into the last column of the 2-D array ``b`` that
the target's window exposes.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .. import _core
from .._errors import ArgumentError, ArgumentTypeError
from ._integers import INT64_MAX, INT64_MIN, integer


class Layout:
    """A strided set of elements: ``shape``, ``strides`` (in elements, any
    sign; default C-contiguous for ``shape``) and ``offset`` (in elements),
    of ``dtype`` (default: the dtype of the call's origin).

    Use it where a target's datatype goes, ``target=(disp, 1, layout)``
    (offsets from ``disp`` target displacement units; a count of
    ``layout.count`` elements is accepted too) or ``target=layout`` (from
    displacement 0), and as an origin's or result's datatype,
    ``[buf, 1, layout]`` (offsets from the buffer's start).

    Guarantees, as for every target: every element the layout touches is
    bounds-checked against the target's window before anything is sent
    (:class:`BoundsError`); elements that overlap are refused; accumulate-style
    calls are atomic per element and ordered per element as the window's
    ``accumulate_ordering`` says; the origin's elements, in its own order,
    meet the layout's elements in C order. onesided never converts: the
    layout's dtype must be the origin's.
    """

    __slots__ = ("shape", "strides", "offset", "dtype", "count", "code", "_core")

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int
    dtype: np.dtype | None
    count: int
    code: int | None  # the dtype's table index (None: the call's dtype)

    def __init__(self, shape: Sequence[int] | int, strides: Sequence[int] | None = None, offset: int = 0,
                 dtype: Any = None) -> None:
        if isinstance(shape, (tuple, list)):
            dims = tuple(integer(n, "Layout shape", 0, INT64_MAX) for n in shape)
        else:
            dims = (integer(shape, "Layout shape", 0, INT64_MAX),)
        if strides is None:
            steps = tuple(math.prod(dims[k + 1:]) for k in range(len(dims)))
        elif isinstance(strides, (tuple, list)):
            steps = tuple(integer(s, "Layout strides", INT64_MIN, INT64_MAX) for s in strides)
        else:
            raise ArgumentTypeError(f"Layout strides must be a tuple of integers, got {type(strides).__name__}")
        if len(steps) != len(dims):
            raise ArgumentError(f"Layout has {len(dims)} dims in shape but {len(steps)} strides")
        self.shape = dims
        self.strides = steps
        self.offset = integer(offset, "Layout offset")
        self.code = None
        if dtype is not None:
            from .._types import dtype_code, dtype_of

            self.code = dtype_code(dtype)
            dtype = dtype_of(self.code)
        self.dtype = dtype
        self.count = math.prod(dims)
        self._core: dict[int, Any] = {}

    @classmethod
    def of(cls, view: Any, base: Any) -> "Layout":
        """The layout of ``view``, a numpy view into ``base``, relative to
        ``base``'s first byte: with ``base`` the array over the target's
        window memory, ``(0, 1, Layout.of(base[:, 0], base))`` targets the
        first column. Offset and strides must be whole elements of
        ``view``'s dtype and every element must lie inside ``base``."""
        if not isinstance(view, np.ndarray) or not isinstance(base, np.ndarray):
            raise ArgumentTypeError("Layout.of(view, base) takes two numpy arrays, got "
                                    f"{type(view).__name__} and {type(base).__name__}")
        itemsize = view.dtype.itemsize
        start = base.__array_interface__["data"][0]
        lo, hi = _byte_bounds(base) if base.size else (start, start)
        first = view.__array_interface__["data"][0]
        offset = first - start
        if offset % itemsize or any(s % itemsize for s in view.strides):
            raise ArgumentError(f"Layout.of: the view's offset ({offset} bytes) and strides {view.strides} must be "
                                f"whole {view.dtype} elements ({itemsize} bytes)")
        if view.size:
            vlo, vhi = _byte_bounds(view)
            if vlo < lo or vhi > hi:
                raise ArgumentError(f"Layout.of: the view spans bytes [{vlo - start}, {vhi - start}) of base, "
                                    f"outside base's [{lo - start}, {hi - start})")
        return cls(view.shape, tuple(s // itemsize for s in view.strides), offset // itemsize, view.dtype)

    def to_core(self, code: int, itemsize: int) -> Any:
        """The core's ``Layout`` of these elements as ``code`` (the call's
        dtype), built once per dtype."""
        made = self._core.get(code)
        if made is None:
            blocks = [(self.offset * itemsize, [(n, s * itemsize) for n, s in zip(self.shape, self.strides)])]
            made = self._core[code] = _core.Layout(code, blocks if self.count else [])
        return made

    def __repr__(self) -> str:
        dtype = "" if self.dtype is None else f", dtype={self.dtype}"
        return f"onesided.Layout(shape={self.shape}, strides={self.strides}, offset={self.offset}{dtype})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Layout):
            return NotImplemented
        return (self.shape, self.strides, self.offset, self.dtype) == (other.shape, other.strides, other.offset,
                                                                       other.dtype)

    def __hash__(self) -> int:
        return hash((self.shape, self.strides, self.offset, self.dtype))


# The fast entries take a target Layout of exactly this class, reading the
# core layouts to_core made (_core), so a layout is checked once per dtype.
_core._set_layout_type(Layout)


def _byte_bounds(a: np.ndarray) -> tuple[int, int]:
    # [lowest, highest + 1) byte address of a's elements (a.size > 0).
    lo = hi = a.__array_interface__["data"][0]
    for n, s in zip(a.shape, a.strides):
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return lo, hi + a.dtype.itemsize
