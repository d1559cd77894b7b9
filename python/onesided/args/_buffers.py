"""Parsing of mpi4py-style buffer and target specifications.

An origin or result is a buffer or, as in mpi4py (lists or tuples alike),
``[buf, count]``, ``[buf, datatype]``, ``[buf, count, datatype]``,
``[buf, (count, displ)]``, ``[buf, (count, displ), datatype]`` or
``[buf, count, displ, datatype]``: ``count`` elements of ``datatype`` (by
default the buffer's own), starting ``displ`` elements into the buffer's
memory. A buffer is anything exporting the buffer protocol (numpy arrays,
``bytes``/``bytearray`` as bytes, ``array.array``, memoryview), DLPack
(``__dlpack__``) or the CUDA array interface over host memory. A datatype
is a numpy dtype (or anything ``np.dtype`` takes, but no tuple, list or
None), an mpi4py ``MPI.Datatype`` (named or derived: see
:mod:`onesided.args._datatypes`) or an :class:`onesided.Layout`.

A buffer may be strided (any numpy view, negative strides included, or a
buffer-protocol object with strides): alone it moves all of its elements,
in C order, as its own dtype, with no copy. A contiguous buffer moves in
memory order (as MPI sees it). A derived datatype or a Layout describes
the elements of a contiguous buffer, from its start.

A target is ``None``, an integer displacement, a :class:`onesided.Layout`
(from displacement 0), or ``(disp[, count[, datatype]])``, the datatype a
dtype, an mpi4py datatype or a Layout. onesided moves typed elements
without conversion: the target's basic dtype must be the origin's and it
must hold as many elements.

Counts, displacements and ranks are integers (``operator.index``; a bool or
a float is refused, never coerced). Errors: the wrong kind of object is an
:class:`ArgumentTypeError` (a TypeError), a read-only or non-contiguous
buffer, or a strided one where a datatype describes the layout, a
:class:`BufferArgumentError` (a BufferError), a wrong value an
:class:`ArgumentError` (a ValueError).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .. import _core
from .._errors import ArgumentError, ArgumentTypeError, BufferArgumentError
from .._types import dtype_code, dtype_of
from ._datatypes import Decoded, decode, is_datatype, replicated
from ._integers import INT64_MAX, integer
from ._layout import Layout


class Message(NamedTuple):
    buffer: Any  # an object exporting the buffer protocol (kept alive until completion)
    count: int
    dtype: int  # table index
    layout: Any = None  # a core Layout of the elements in the buffer, or None (see _buffers' docstring)


class Target(NamedTuple):
    disp: int
    layout: Any = None  # a core Layout relative to disp, or None: count contiguous elements


def _is_buffer(obj: Any) -> bool:
    if isinstance(obj, (np.ndarray, bytes, bytearray, memoryview)):
        return True
    try:
        memoryview(obj)
    except TypeError:
        return any(hasattr(obj, name) for name in ("__dlpack__", "__cuda_array_interface__", "__array_interface__"))
    return True


class _HostInterface:
    """An ``__array_interface__`` for numpy, after onesided checked it;
    holds the object that owns the memory."""

    def __init__(self, interface: dict[str, Any], owner: Any) -> None:
        self.__array_interface__ = interface
        self._owner = owner


def _interface_array(obj: Any, interface: Any, name: str, what: str) -> np.ndarray:
    # An array interface hands over a raw address: numpy would trust it, so
    # the fields are checked here, and the first and last byte must be
    # mapped host memory (device memory, or an address from nowhere, is not).
    if not isinstance(interface, dict):
        raise ArgumentTypeError(f"{what}: {name} must be a dict, got {type(interface).__name__}")
    try:
        address, readonly = interface["data"]
        address = integer(address, f"{what} {name} data address", 0, 2**64 - 1)
        shape = tuple(integer(d, f"{what} {name} shape", 0, INT64_MAX) for d in interface["shape"])
        if address == 0 and 0 not in shape:
            raise LookupError  # NULL data: refused below, not as a malformed interface
        strides = interface.get("strides")
        if strides is not None:
            strides = tuple(integer(d, f"{what} {name} strides") for d in strides)
        array = np.asarray(_HostInterface(
            {"shape": shape, "typestr": interface["typestr"], "strides": strides, "data": (address, bool(readonly)),
             "version": 3, "descr": interface.get("descr", [("", interface["typestr"])])}, obj))
    except LookupError as e:
        if isinstance(e, KeyError):
            raise ArgumentTypeError(f"{what}: malformed {name} (no {e})") from None
        raise BufferArgumentError(f"{what}: {name} data is NULL for shape {interface['shape']}") from None
    except (TypeError, ValueError) as e:
        raise ArgumentTypeError(f"{what}: malformed {name} ({e})") from None
    if array.size:
        lo, hi = np.lib.array_utils.byte_bounds(array) if hasattr(np.lib, "array_utils") else np.byte_bounds(array)
        if not _core.host_memory(lo, hi - lo):
            raise BufferArgumentError(f"{what}: {name} points to memory that is not mapped in this process "
                                      "(device memory, or an address from nowhere; onesided reaches host memory only)")
    return array


def as_array(obj: Any, what: str, writable: bool = False) -> np.ndarray:
    """A numpy array over the memory of a buffer (no copy), from any producer:
    numpy arrays as they are; the buffer protocol (any strides; a format
    numpy does not read, as bytes, if C-contiguous); DLPack, versioned or
    not (taken by the core, which keeps the producer's tensor until the
    array is gone and then calls its deleter once); the CUDA array interface
    and ``__array_interface__`` over mapped host memory. ``writable`` asks
    a DLPack producer for memory it does not flag read-only or copied.
    Anything else raises ArgumentTypeError; a producer's own exception
    propagates."""
    if isinstance(obj, np.ndarray):
        return obj
    try:
        view = memoryview(obj)
    except TypeError:
        view = None
    except (ValueError, BufferError) as e:  # a released view, an export refused
        raise BufferArgumentError(f"{what} buffer cannot be exported ({e})") from None
    if view is not None:
        try:
            return np.asarray(view)
        except (TypeError, ValueError, NotImplementedError):
            # A format numpy does not read (ctypes pointers, ...): its bytes,
            # in place (a copy would lose what a Get writes into it).
            if not view.c_contiguous:
                raise BufferArgumentError(f"{what} buffer has format {view.format!r}, which numpy does not read, "
                                          "and is not C-contiguous; onesided moves such a buffer as its bytes "
                                          "only when contiguous") from None
            return np.frombuffer(view.cast("B"), np.uint8)
    if hasattr(obj, "__dlpack__"):
        return _core.dlpack_array(obj, what, writable)
    for name in ("__cuda_array_interface__", "__array_interface__"):
        interface = getattr(obj, name, None)
        if interface is not None:
            return _interface_array(obj, interface, name, what)
    raise ArgumentTypeError(
        f"{what} must be a buffer (buffer protocol, DLPack or array interface), got {type(obj).__name__}"
    )


# numpy dtype -> table index, for the common case below.
_CODE_OF: dict[np.dtype, int] = {}


def message(spec: Any, *, writable: bool, what: str, accumulate: bool = False) -> Message:
    """Parse an origin/result spec into (buffer, count, dtype code, layout),
    checking that the buffer is writable when it must be and big enough for
    its elements. ``accumulate`` words the refusal of mixed-type datatypes
    for accumulate-style calls."""
    # The common case, a plain C-contiguous ndarray, in a few attribute reads
    # (this runs on every RMA call).
    if type(spec) is np.ndarray:
        flags = spec.flags
        code = _CODE_OF.get(spec.dtype)
        if code is not None and flags.c_contiguous and (flags.writeable or not writable):
            return Message(spec, spec.size, code)
    return _message(spec, writable, what, accumulate)


_FORMS = ("buf, [buf, count], [buf, datatype], [buf, count, datatype], [buf, (count, displ)], "
          "[buf, (count, displ), datatype] or [buf, count, displ, datatype]")


def _count(value: Any, what: str) -> int | None:
    return None if value is None else integer(value, f"{what} count", 0, INT64_MAX)


def _count_displ(item: Any, what: str) -> tuple[int | None, int]:
    # The middle item of [buf, count, ...] or [buf, (count, displ), ...].
    if isinstance(item, (tuple, list)):
        if len(item) != 2:
            raise ArgumentTypeError(f"{what}: (count, displ) must be two integers, got {item!r:.80}")
        return _count(item[0], what), integer(item[1], f"{what} displ", 0, INT64_MAX)
    return _count(item, what), 0


def _message(spec: Any, writable: bool, what: str, accumulate: bool) -> Message:
    count: int | None = None
    displ = 0
    dtype: Any = None
    buf = spec
    if isinstance(spec, (tuple, list)):
        if not spec or not _is_buffer(spec[0]):
            if spec and spec[0] is None:
                raise ArgumentTypeError(f"{what} buffer is required, got None")
            raise ArgumentTypeError(f"{what} must be a buffer (buffer protocol, DLPack or CUDA array interface) "
                                    f"or a list or tuple starting with one ({_FORMS}); got {spec!r:.80}")
        buf, *rest = spec
        if len(rest) == 1:
            # [buf, count], [buf, (count, displ)] or [buf, datatype]
            item = rest[0]
            if isinstance(item, (tuple, list)) or _is_int(item):
                count, displ = _count_displ(item, what)
            else:
                dtype = item
        elif len(rest) == 2:
            (count, displ), dtype = _count_displ(rest[0], what), rest[1]
        elif len(rest) == 3:
            count, displ, dtype = _count(rest[0], what), integer(rest[1], f"{what} displ", 0, INT64_MAX), rest[2]
        elif rest:
            raise ArgumentTypeError(f"{what} must be a buffer or {_FORMS}; got {len(spec)} items")
    if buf is None:
        raise ArgumentTypeError(f"{what} buffer is required, got None")
    arr = as_array(buf, what, writable)
    flags = arr.flags
    if writable and not flags.writeable:
        raise BufferArgumentError(f"{what} buffer is read-only")
    contiguous = flags.c_contiguous or flags.f_contiguous
    if isinstance(dtype, Layout):
        return _laid_out(arr, contiguous, count, displ, dtype, what)
    per = 1  # basic elements per datatype element
    if is_datatype(dtype):
        d = _one_type(decode(dtype), f"{what} datatype", accumulate)
        if not d.contiguous or not d.count:
            return _derived(arr, contiguous, count, displ, d, what)
        dtype, per = d.dtype, d.count
    if not contiguous:
        return _strided(arr, None if count is None else count * per, displ, dtype, what)
    code = dtype_code(arr.dtype if dtype is None else dtype)
    if dtype is None:
        _CODE_OF[arr.dtype] = code
    itemsize = dtype_of(code).itemsize * per
    nbytes = arr.nbytes
    if count is None:
        if nbytes % itemsize:
            raise ArgumentError(f"{what} buffer holds {nbytes} bytes, not a whole number of {dtype_of(code)} "
                                f"({itemsize} bytes)")
        count = nbytes // itemsize - displ
        if count < 0:
            raise ArgumentError(f"{what} displ {displ} is past the end of the buffer ({nbytes // itemsize} x "
                                f"{dtype_of(code)})")
    if (displ + count) * itemsize > nbytes:
        raise ArgumentError(
            f"{what} buffer holds {nbytes} bytes but {count} x {dtype_of(code)}"
            + (f" from element {displ}" if displ else "")
            + f" needs {(displ + count) * itemsize}"
        )
    if displ:
        # The elements from displ on, as bytes (memory order: the buffer may
        # be Fortran-ordered); the core writes or reads from their start.
        raw = arr.reshape(-1, order="A").view(np.uint8)
        arr = raw[displ * itemsize : (displ + count) * itemsize] if displ else raw
    return Message(arr, count * per, code)


def absent(spec: Any, what: str) -> bool:
    """Whether ``spec`` passes no memory: None, or a list or tuple whose
    buffer is None (``[None, MPI.INT]``, ``[None, 0, T]``), which MPI code
    passes toward a PROC_NULL target. The rest of such a spec is still
    checked: counts and displacements are integers, a datatype is one."""
    if spec is None:
        return True
    if not isinstance(spec, (tuple, list)) or not spec or spec[0] is not None:
        return False
    rest = spec[1:]
    if len(rest) > 3:
        raise ArgumentTypeError(f"{what} must be a buffer or {_FORMS}; got {len(spec)} items")
    for item in rest:
        if isinstance(item, (tuple, list)):
            _count_displ(item, what)
        elif is_datatype(item) or isinstance(item, Layout):
            continue
        elif _is_int(item):
            _count(item, what)
        else:
            dtype_code(item)  # raises for what is no dtype
    return True


def _strided(arr: np.ndarray, count: int | None, displ: int, dtype: Any, what: str) -> Message:
    # A strided view moves its own elements, all of them, in C order: the
    # core reads its strides from the buffer (no copy).
    code = dtype_code(arr.dtype if dtype is None else dtype)
    if dtype_of(code).itemsize != arr.itemsize:
        raise ArgumentError(f"{what}: a strided view moves its own elements, so its dtype must be the size of "
                            f"them: {dtype_of(code)} is {dtype_of(code).itemsize} bytes, its {arr.dtype} "
                            f"{arr.itemsize} (onesided does not convert)")
    if displ or (count is not None and count != arr.size):
        raise ArgumentError(f"{what}: a strided view moves all of its {arr.size} elements (got count {count}, displ "
                            f"{displ}); slice the view instead")
    return Message(arr, arr.size, code)


def _one_type(d: Decoded, what: str, accumulate: bool) -> Decoded:
    # A struct that mixes basic types moves as its bytes (see _datatypes):
    # any datatype in Put and Get, one basic type in accumulate-style calls.
    if d.mixed and accumulate:
        raise ArgumentError(f"{what} {d.name} mixes basic types ({', '.join(d.mixed)}): MPI forbids accumulate-style "
                            "calls on it (their datatypes hold one predefined type)")
    if d.dtype is None:
        raise ArgumentError(f"{what} {d.name} holds no elements")
    return d


def _need_contiguous(arr: np.ndarray, contiguous: bool, what: str) -> None:
    if not contiguous:
        raise BufferArgumentError(f"{what} buffer must be contiguous when a datatype describes its layout (got a "
                                  "strided view: pass the view alone to move its elements)")


def _derived(arr: np.ndarray, contiguous: bool, count: int | None, displ: int, d: Decoded, what: str) -> Message:
    # [buf, count, displ, datatype] as MPI lays it out: copy k of the
    # datatype from byte (displ + k) * extent of the buffer's memory.
    _need_contiguous(arr, contiguous, what)
    nbytes = arr.nbytes
    if count is None:
        if d.extent <= 0:
            raise ArgumentError(f"{what}: give a count with datatype {d.name} (its extent is {d.extent})")
        count = max(nbytes // d.extent - displ, 0)
    code = dtype_code(d.dtype)
    layout = _core_layout(d, code, count, displ * d.extent)
    if count and (layout.lo < 0 or layout.hi > nbytes):
        raise ArgumentError(f"{what} buffer holds {nbytes} bytes but {count} x {d.name}"
                            + (f" from element {displ}" if displ else "")
                            + f" reaches bytes [{layout.lo}, {layout.hi})")
    return Message(arr, count * d.count, code, layout)


def _core_layout(d: Decoded, code: int, copies: int, shift: int) -> Any:
    # Built once per (copies, shift) of a decoded datatype; a program that
    # varies them call after call keeps only the last few.
    made = d.made.get((copies, shift))
    if made is None:
        if len(d.made) >= _MADE_KEPT:
            d.made.clear()
        blocks = [(o + shift, list(dims)) for o, dims in replicated(d, copies)]
        made = d.made[(copies, shift)] = _core.Layout(code, blocks)
    return made


_MADE_KEPT = 16


def _laid_out(arr: np.ndarray, contiguous: bool, count: int | None, displ: int, layout: Layout,
              what: str) -> Message:
    _need_contiguous(arr, contiguous, what)
    if displ:
        raise ArgumentError(f"{what}: a Layout gives its own offset; displ must be 0, got {displ}")
    code = dtype_code(arr.dtype) if layout.code is None else layout.code
    _layout_count(layout, count, what)
    core = layout.to_core(code, dtype_of(code).itemsize)
    if layout.count and (core.lo < 0 or core.hi > arr.nbytes):
        raise ArgumentError(f"{what} buffer holds {arr.nbytes} bytes but {layout!r} reaches bytes "
                            f"[{core.lo}, {core.hi})")
    return Message(arr, layout.count, code, core)


def _layout_count(layout: Layout, count: int | None, what: str) -> None:
    if count is not None and count != 1 and count != layout.count:
        raise ArgumentError(f"{what} count with a Layout is 1 (one copy, as with an MPI datatype) or its "
                            f"{layout.count} elements, got {count}")


def _is_int(value: Any) -> bool:
    # A count, as mpi4py tells one: anything with __index__ (a bool is one,
    # and then refused by integer()); a type (np.int64) is a datatype.
    return isinstance(value, (int, np.integer)) or (not isinstance(value, type) and hasattr(type(value), "__index__"))


def target(spec: Any, origin: Message | None, accumulate: bool = False) -> Target:
    """The target displacement and layout of a target spec, after checking
    that its elements are the origin's in number and basic dtype. With no
    origin (a None buffer for a PROC_NULL target) only the spec's own form
    is checked."""
    if spec is None:
        return Target(0)
    if type(spec) is int:
        return Target(integer(spec, "target displacement"))
    if isinstance(spec, Layout):
        return Target(0, None if origin is None else _target_layout(spec, None, origin))
    if isinstance(spec, (tuple, list)):
        if not 1 <= len(spec) <= 3:
            raise ArgumentTypeError(f"target must be None, a displacement, a Layout or (disp[, count[, datatype]]), "
                                    f"got {spec!r:.80}")
        disp = integer(spec[0], "target displacement")
        count = integer(spec[1], "target count", 0, INT64_MAX) if len(spec) >= 2 and spec[1] is not None else None
        dtype = spec[2] if len(spec) == 3 else None
        if isinstance(dtype, Layout):
            return Target(disp, None if origin is None else _target_layout(dtype, count, origin))
        if dtype is not None and not is_datatype(dtype):
            dtype_code(dtype)  # raises for what is no dtype
        if origin is None:
            if is_datatype(dtype):
                _one_type(decode(dtype), "target datatype", accumulate)
            return Target(disp)
        per = 1
        if is_datatype(dtype):
            d = _one_type(decode(dtype), "target datatype", accumulate)
            _same_basic(d.dtype, origin, d.name)
            if not d.contiguous or not d.count:
                copies = _copies(count, d, origin)
                return Target(disp, _core_layout(d, origin.dtype, copies, 0))
            dtype, per = d.dtype, d.count
        if count is not None and count * per != origin.count:
            raise ArgumentError(
                f"target count {count}" + (f" x {per} elements" if per != 1 else "")
                + f" differs from origin count {origin.count} (onesided does not convert)"
            )
        if dtype is not None:
            _same_basic(dtype, origin)
        return Target(disp)
    return Target(integer(spec, "target displacement"))


def _same_basic(dtype: Any, origin: Message, name: str = "") -> None:
    if dtype_code(dtype) != origin.dtype:
        raise ArgumentError(f"target dtype {name or dtype} differs from origin dtype {dtype_of(origin.dtype)} "
                            "(onesided does not convert)")


def _copies(count: int | None, d: Decoded, origin: Message) -> int:
    # The number of copies of a derived target datatype; its elements must
    # be the origin's, one for one (MPI's matching type signatures).
    if count is None:
        count = origin.count // d.count if d.count else 0
    if count * d.count != origin.count:
        raise ArgumentError(f"target count {count} x {d.name} ({d.count} elements each) differs from origin count "
                            f"{origin.count} (onesided does not convert)")
    return count


def _target_layout(layout: Layout, count: int | None, origin: Message) -> Any:
    _layout_count(layout, count, "target")
    if layout.code is not None and layout.code != origin.dtype:
        raise ArgumentError(f"target Layout dtype {layout.dtype} differs from origin dtype "
                            f"{dtype_of(origin.dtype)} (onesided does not convert)")
    if layout.count != origin.count:
        raise ArgumentError(f"target {layout!r} holds {layout.count} elements, origin count is {origin.count} "
                            "(onesided does not convert)")
    return layout.to_core(origin.dtype, dtype_of(origin.dtype).itemsize)


def window_memory(memory: Any) -> Any:
    """The memory a Create window exposes: any writable C-contiguous buffer
    (DLPack and CUDA array interface objects as numpy arrays over their
    memory)."""
    arr = as_array(memory, "memory", writable=True)
    if not arr.flags.writeable:
        raise BufferArgumentError("memory is read-only: a window needs writable memory")
    if not arr.flags.c_contiguous:
        raise BufferArgumentError("memory must be C-contiguous")
    try:
        memoryview(memory)
    except TypeError:
        return arr
    return memory


def single(m: Message, what: str) -> Message:
    """Rule for Fetch_and_op and Compare_and_swap: exactly one element
    (given through a datatype or Layout, the bytes of that element)."""
    if m.count != 1:
        raise ArgumentError(f"{what}: expecting a single element, got {m.count}")
    if m.layout is not None:
        at = m.layout.lo
        return Message(m.buffer.reshape(-1, order="A").view(np.uint8)[at:at + dtype_of(m.dtype).itemsize], 1,
                       m.dtype)
    return m


def plain(m: Message, what: str) -> None:
    """Rule for Rmw and Rmw2: contiguous buffers, no datatype layout."""
    if m.layout is not None or (m.buffer is not None and not _contiguous(m.buffer)):
        raise BufferArgumentError(f"{what} buffer must be contiguous (Rmw and Rmw2 take no strided views or "
                                  "derived datatypes)")


def _contiguous(buf: Any) -> bool:
    flags = buf.flags if isinstance(buf, np.ndarray) else None
    return flags is None or flags.c_contiguous or flags.f_contiguous


def same_dtype(a: Message | None, b: Message | None, what: str) -> None:
    """Rule for one-element calls: every buffer holds the same dtype (a
    buffer left out, None for a PROC_NULL target, matches any)."""
    if a is None or b is None:
        return
    if a.dtype != b.dtype:
        raise ArgumentError(f"{what}: dtypes differ ({dtype_of(a.dtype)} vs {dtype_of(b.dtype)})")


def same_shape(a: Message | None, b: Message | None, what: str) -> None:
    """Rule for multi-buffer calls: one dtype and one count for all."""
    same_dtype(a, b, what)
    if a is not None and b is not None and a.count != b.count:
        raise ArgumentError(f"{what}: counts differ ({a.count} vs {b.count})")
