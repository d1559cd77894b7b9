"""mpi4py derived datatypes, decoded into the layouts onesided moves.

An MPI datatype is a type map: a list of (basic type, byte displacement)
pairs, plus a lower bound and an extent that say where the next copy of the
type starts. onesided moves one basic type per call, so a datatype decodes
into its basic numpy dtype and its displacements, described compactly as
blocks ``(offset, ((count, stride), ...))`` (bytes, dims outermost first,
visited in C order: the core's ``Layout`` form) in type-map order, beside
its ``lb`` and ``extent`` (MPI's own, read from ``Get_extent``).

Decoding goes through mpi4py's envelope/contents API (``Datatype.decode``),
recursively, for the named types and the dup, contiguous, vector, hvector,
indexed, hindexed, indexed_block, hindexed_block, subarray (C and Fortran
order), resized and struct combiners. MPI's pair types (``MPI.DOUBLE_INT``,
...) decode to the table's pair records, one element each. A struct whose
fields have different basic types decodes to the bytes of its elements
(``uint8``, each element a run of its itemsize) and names the types it
mixes (``Decoded.mixed``): Put and Get move it byte for byte, as MPI allows
any datatype there; accumulate-style calls refuse it, as MPI does. Darray and the Fortran-90
parametrised types raise :class:`UnsupportedError`.

Each datatype object is decoded once: the result is cached on the Python
object's identity and its MPI handle (a handle freed and reused by a new
type belongs to a new object, or, on the same object, changes), dropped
when the object dies. mpi4py is never imported here: its objects reach this
module only from a program that imported ``mpi4py.MPI`` itself.
"""

from __future__ import annotations

import math
import sys
import weakref
from typing import Any, NamedTuple

import numpy as np

from .._errors import ArgumentError, UnsupportedError
from .._types import dtype_code, dtype_of

Dims = tuple[tuple[int, int], ...]  # (count, stride in bytes), outermost first
Block = tuple[int, Dims]  # (offset in bytes, dims)


class Decoded(NamedTuple):
    """One MPI datatype as onesided moves it."""

    dtype: np.dtype | None  # the one basic type (uint8 when mixed: the elements' bytes)
    blocks: tuple[Block, ...]  # type-map order; empty when the type holds nothing
    count: int  # basic elements in one copy of the type
    lb: int  # MPI's lower bound, bytes
    extent: int  # MPI's extent, bytes: copy k of the type starts k * extent further
    contiguous: bool  # the elements are ``count`` consecutive dtype elements from offset 0
    mixed: tuple[str, ...] = ()  # the basic dtypes of a struct that mixes them (then blocks are of bytes)
    name: str = ""  # the combiner chain, for messages ("VECTOR of INT64_T")
    # The core Layouts made from it, by (copies, byte offset): see _buffers.
    made: dict[tuple[int, int], Any] = {}


def is_datatype(obj: Any) -> bool:
    """Whether ``obj`` is an mpi4py ``MPI.Datatype`` (False when the program
    has not imported mpi4py.MPI)."""
    mpi = sys.modules.get("mpi4py.MPI")
    return mpi is not None and isinstance(obj, mpi.Datatype)


# id(datatype) -> (weak reference to it, its handle then, its decoding).
_CACHE: dict[int, tuple[weakref.ref[Any], int, Decoded]] = {}


def decode(datatype: Any) -> Decoded:
    """The decoding of an mpi4py datatype, cached per datatype object.
    Raises UnsupportedError for combiners onesided does not take and
    ArgumentError for MPI.DATATYPE_NULL or a freed datatype."""
    key = id(datatype)
    handle = datatype.handle
    hit = _CACHE.get(key)
    if hit is not None and hit[0]() is datatype and hit[1] == handle:
        return hit[2]
    mpi = sys.modules["mpi4py.MPI"]
    if datatype == mpi.DATATYPE_NULL:
        raise ArgumentError("datatype is MPI.DATATYPE_NULL (freed, or never created)")
    decoded = _decode(mpi, datatype)
    _CACHE[key] = (weakref.ref(datatype, lambda _, key=key: _CACHE.pop(key, None)), handle, decoded)
    return decoded


def _decode(mpi: Any, datatype: Any) -> Decoded:
    base, combiner, params = datatype.decode()
    try:
        return _combine(mpi, datatype, base, combiner, params)
    finally:
        # MPI_Type_get_contents hands out new references to derived inner
        # types, which the caller frees (predefined ones are not freed).
        inner = params.get("datatypes", [base] if combiner != "NAMED" else [])
        for t in inner:
            if not t.is_predefined:
                t.Free()


def _named(mpi: Any, datatype: Any) -> Decoded:
    from mpi4py.util import dtlib  # present: mpi4py.MPI is imported

    name = datatype.Get_name() or "a named datatype"
    try:
        dt = dtlib.to_numpy_dtype(datatype)
    except (ValueError, KeyError, TypeError) as e:
        raise UnsupportedError(f"MPI datatype {name} has no numpy equivalent ({e})") from None
    lb, extent = datatype.Get_extent()
    if dt.fields is not None:
        # MPI.DOUBLE_INT and the other pair types: elements of the table
        # (atomic as a whole in MINLOC, MAXLOC, REPLACE and NO_OP).
        dt = dtype_of(dtype_code(dt))
        return Decoded(dt, ((0, ()),), 1, lb, extent, dt.itemsize == extent and lb == 0, (), name, {})
    if dt.subdtype is not None:
        base, shape = dt.subdtype
        n = math.prod(shape)
        return Decoded(base, ((0, ((n, base.itemsize),)),), n, lb, extent, extent == n * base.itemsize and lb == 0, (),
                       name, {})
    return Decoded(dt, ((0, ()),), 1, lb, extent, dt.itemsize == extent and lb == 0, (), name, {})


def _replicate(inner: Decoded, placements: list[tuple[int, Dims]]) -> list[Block]:
    # Each placement (offset, dims) puts copies of `inner` at offset +
    # sum(i_k * stride_k), copy after copy. One inner block nests inside
    # the placement's dims (its dims innermost: C order is copy order).
    # Several must not (that would visit block 0 of every copy first), so
    # the placement's copies are spelled out one by one.
    if len(inner.blocks) == 1:
        (o, d), = inner.blocks
        return [(off + o, dims + d) for off, dims in placements]
    return [(at + o, d) for off, dims in placements for at in offsets([(off, dims)]) for o, d in inner.blocks]


def _combine(mpi: Any, datatype: Any, base: Any, combiner: str, params: dict[str, Any]) -> Decoded:
    if combiner == "NAMED":
        return _named(mpi, datatype)
    lb, extent = datatype.Get_extent()
    if combiner == "STRUCT":
        fields = [decode_uncached(mpi, t) for t in params["datatypes"]]
        kinds = tuple(dict.fromkeys(k for f in fields for k in (f.mixed or (str(f.dtype),) if f.count else ())))
        name = "STRUCT of " + ", ".join(f.name for f in fields)
        if len(kinds) > 1:
            fields = [_as_bytes(f, kinds) for f in fields]
        blocks: list[Block] = []
        for f, n, disp in zip(fields, params["blocklengths"], params["displacements"]):
            if n and f.count:
                blocks += _replicate(f, [(disp, ((n, f.extent),))])
        dtypes = [f.dtype for f in fields if f.count]
        return _finish(dtypes[0] if dtypes else fields[0].dtype if fields else None, blocks, lb, extent, name,
                       kinds if len(kinds) > 1 else ())
    if combiner in ("DARRAY", "F90_REAL", "F90_COMPLEX", "F90_INTEGER", "VALUE_INDEX"):
        raise UnsupportedError(f"MPI datatype combiner {combiner} is not supported (onesided decodes contiguous, "
                               "vector, hvector, indexed, hindexed, indexed_block, hindexed_block, subarray, "
                               "resized, struct and dup)")
    old = decode_uncached(mpi, base)
    name = f"{combiner} of {old.name}"
    e = old.extent
    placements: list[tuple[int, Dims]]
    if combiner in ("DUP", "RESIZED"):
        placements = [(0, ())]
    elif combiner == "CONTIGUOUS":
        placements = [(0, ((params["count"], e),))]
    elif combiner in ("VECTOR", "HVECTOR"):
        stride = params["stride"] * (e if combiner == "VECTOR" else 1)
        placements = [(0, ((params["count"], stride), (params["blocklength"], e)))]
    elif combiner in ("INDEXED", "HINDEXED"):
        unit = e if combiner == "INDEXED" else 1
        placements = [(d * unit, ((n, e),)) for n, d in zip(params["blocklengths"], params["displacements"])]
    elif combiner in ("INDEXED_BLOCK", "HINDEXED_BLOCK"):
        unit = e if combiner == "INDEXED_BLOCK" else 1
        n = params["blocklength"]
        placements = [(d * unit, ((n, e),)) for d in params["displacements"]]
    elif combiner == "SUBARRAY":
        sizes, subsizes, starts = params["sizes"], params["subsizes"], params["starts"]
        if params["order"] == mpi.ORDER_FORTRAN:
            # Fortran order: the first index runs fastest, so it is the
            # innermost dim; strides grow from the first index on.
            sizes, subsizes, starts = sizes[::-1], subsizes[::-1], starts[::-1]
        strides = [math.prod(sizes[k + 1:]) * e for k in range(len(sizes))]
        placements = [(sum(s * st for s, st in zip(starts, strides)), tuple(zip(subsizes, strides)))]
    else:
        raise UnsupportedError(f"MPI datatype combiner {combiner} is not supported")
    # Placements with no elements (a zero block length) hold nothing.
    placements = [(o, d) for o, d in placements if all(n for n, _ in d)]
    return _finish(old.dtype, _replicate(old, placements) if old.count else [], lb, extent, name, old.mixed)


_BYTE = np.dtype(np.uint8)


def _as_bytes(d: Decoded, kinds: tuple[str, ...]) -> Decoded:
    # A field of a struct that mixes basic types, as the bytes of its
    # elements: Put and Get move such a type byte for byte (no conversion),
    # each element a run of its itemsize at its own displacement.
    if d.dtype is None or d.mixed or not d.count:
        return d._replace(dtype=_BYTE if d.count else d.dtype, mixed=kinds)
    size = d.dtype.itemsize
    blocks = tuple((o, dims + ((size, 1),)) for o, dims in d.blocks)
    return d._replace(dtype=_BYTE, blocks=blocks, count=d.count * size, contiguous=False, mixed=kinds)


def _finish(dtype: np.dtype | None, blocks: list[Block], lb: int, extent: int, name: str,
            mixed: tuple[str, ...] = ()) -> Decoded:
    # Dims of count 1 describe nothing: dropped, so a vector of one block
    # is one run and the contiguity test below sees it.
    blocks = [(o, tuple((n, s) for n, s in d if n != 1)) for o, d in blocks]
    count = sum(math.prod(n for n, _ in d) for _, d in blocks)
    contiguous = dtype is not None and _is_run(blocks, dtype.itemsize) and lb == 0 and extent == count * dtype.itemsize
    return Decoded(dtype, tuple(blocks), count, lb, extent, contiguous, mixed, name, {})


def _is_run(blocks: list[Block], itemsize: int) -> bool:
    # The blocks, in order, are consecutive elements from offset 0.
    at = 0
    for offset, dims in blocks:
        if offset != at:
            return False
        size = itemsize
        for n, stride in reversed(dims):
            if stride != size:
                return False
            size *= n
        at += size
    return True


def decode_uncached(mpi: Any, datatype: Any) -> Decoded:
    """Decode an inner type met while decoding another (a temporary
    handle that is freed afterwards, so never cached)."""
    return _decode(mpi, datatype)


def offsets(blocks: tuple[Block, ...] | list[Block]) -> list[int]:
    """Every element's byte offset, in visiting order (for tests and small
    layouts only)."""
    out: list[int] = []
    for offset, dims in blocks:
        if not dims:
            out.append(offset)
            continue
        grid = np.zeros((), np.int64) + offset
        for n, stride in dims:
            grid = grid[..., None] + np.arange(n, dtype=np.int64) * stride
        out += grid.reshape(-1).tolist()
    return out


def replicated(decoded: Decoded, count: int) -> list[Block]:
    """The blocks of ``count`` consecutive copies of a datatype (copy k at
    ``k * extent``), as MPI lays out ``(buf, count, datatype)``."""
    if count == 1:
        return list(decoded.blocks)
    return _replicate(decoded, [(0, ((count, decoded.extent),))]) if count and decoded.count else []
