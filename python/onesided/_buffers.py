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
None) or an mpi4py ``MPI.Datatype``.

A target is ``None``, an integer displacement, or ``(disp[, count[,
dtype]])``. onesided moves typed elements without conversion, so a target's
count and dtype must match the origin's.

Counts, displacements and ranks are integers (``operator.index``; a bool or
a float is refused, never coerced). Errors: the wrong kind of object is an
:class:`ArgumentTypeError` (a TypeError), a read-only or non-contiguous
buffer a :class:`BufferArgumentError` (a BufferError), a wrong value an
:class:`ArgumentError` (a ValueError).
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

import numpy as np

from ._errors import ArgumentError, ArgumentTypeError, BufferArgumentError
from ._mpi_args import INT64_MAX, integer
from ._types import dtype_code, dtype_of


class Message(NamedTuple):
    buffer: Any  # an object exporting the buffer protocol (kept alive until completion)
    count: int
    dtype: int  # table index


def _is_buffer(obj: Any) -> bool:
    if isinstance(obj, (np.ndarray, bytes, bytearray, memoryview)):
        return True
    try:
        memoryview(obj)
    except TypeError:
        return hasattr(obj, "__dlpack__") or hasattr(obj, "__cuda_array_interface__")
    return True


class _HostInterface:
    """An ``__array_interface__`` over host memory described by a CUDA array
    interface; holds the object that owns the memory."""

    def __init__(self, interface: dict[str, Any], owner: Any) -> None:
        self.__array_interface__ = interface
        self._owner = owner


def _is_host_memory(address: int, nbytes: int) -> bool:
    # A write(2) from an address the process cannot read fails with EFAULT
    # instead of faulting, so device memory (unmapped on the host) is told
    # apart from host memory without touching it.
    if nbytes == 0:
        return True
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    r, w = os.pipe()
    try:
        for at in {address, address + nbytes - 1}:
            if libc.write(w, ctypes.c_void_p(at), 1) != 1:
                return False
            os.read(r, 1)
    finally:
        os.close(r)
        os.close(w)
    return True


def as_array(obj: Any, what: str) -> np.ndarray:
    """A numpy array over the memory of a buffer (no copy): numpy arrays as
    they are, other buffer-protocol objects by their format (``bytes`` and
    ``bytearray`` as uint8), DLPack objects on the CPU, CUDA array interface
    objects over host memory. Anything else raises ArgumentTypeError."""
    if isinstance(obj, np.ndarray):
        return obj
    try:
        view = memoryview(obj)
    except TypeError:
        view = None
    if view is not None:
        try:
            return np.asarray(view)
        except (TypeError, ValueError, NotImplementedError):
            # A format numpy does not read (ctypes pointers, ...): its bytes.
            if not view.contiguous:
                raise BufferArgumentError(f"{what} buffer must be contiguous") from None
            return np.frombuffer(view.cast("B") if view.c_contiguous else view.tobytes(), np.uint8)
    if hasattr(obj, "__dlpack__"):
        try:
            return np.from_dlpack(obj)
        except (BufferError, TypeError, ValueError, RuntimeError) as e:
            raise ArgumentTypeError(f"{what}: a DLPack object onesided cannot read as host memory ({e})") from None
    interface = getattr(obj, "__cuda_array_interface__", None)
    if isinstance(interface, dict):
        try:
            address, readonly = interface["data"]
            array = np.asarray(_HostInterface(
                {"shape": tuple(interface["shape"]), "typestr": interface["typestr"],
                 "strides": interface.get("strides"), "data": (address, readonly), "version": 3}, obj))
        except (KeyError, TypeError, ValueError) as e:
            raise ArgumentTypeError(f"{what}: malformed __cuda_array_interface__ ({e})") from None
        if not _is_host_memory(address, array.nbytes):
            raise ArgumentTypeError(f"{what}: a CUDA array interface object over device memory (onesided "
                                    "reaches host memory only)")
        return array
    raise ArgumentTypeError(
        f"{what} must be a buffer (buffer protocol, DLPack or CUDA array interface), got {type(obj).__name__}"
    )


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


def _message(spec: Any, writable: bool, what: str) -> Message:
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
    arr = as_array(buf, what)
    flags = arr.flags
    if not (flags.c_contiguous or flags.f_contiguous):
        raise BufferArgumentError(f"{what} buffer must be contiguous (got a strided view)")
    if writable and not flags.writeable:
        raise BufferArgumentError(f"{what} buffer is read-only")
    code = dtype_code(arr.dtype if dtype is None else dtype)
    if dtype is None:
        _CODE_OF[arr.dtype] = code
    itemsize = dtype_of(code).itemsize
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
    return Message(arr, count, code)


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def target(spec: Any, origin: Message) -> int:
    """The target displacement of a target spec, after checking that its count
    and dtype (if given) match the origin's."""
    if spec is None:
        return 0
    if type(spec) is int:
        return integer(spec, "target displacement")
    if isinstance(spec, (tuple, list)):
        if not 1 <= len(spec) <= 3:
            raise ArgumentTypeError(f"target must be None, a displacement or (disp[, count[, dtype]]), got {spec!r:.80}")
        disp = integer(spec[0], "target displacement")
        if len(spec) >= 2 and spec[1] is not None:
            count = integer(spec[1], "target count", 0, INT64_MAX)
            if count != origin.count:
                raise ArgumentError(
                    f"target count {count} differs from origin count {origin.count} (onesided does not convert)"
                )
        if len(spec) == 3 and spec[2] is not None and dtype_code(spec[2]) != origin.dtype:
            raise ArgumentError(
                f"target dtype {spec[2]} differs from origin dtype {dtype_of(origin.dtype)} (onesided does not convert)"
            )
        return disp
    return integer(spec, "target displacement")


def window_memory(memory: Any) -> Any:
    """The memory a Create window exposes: any writable C-contiguous buffer
    (DLPack and CUDA array interface objects as numpy arrays over their
    memory)."""
    arr = as_array(memory, "memory")
    if not arr.flags.writeable:
        raise BufferArgumentError("memory is read-only: a window needs writable memory")
    if not arr.flags.c_contiguous:
        raise BufferArgumentError("memory must be C-contiguous")
    try:
        memoryview(memory)
    except TypeError:
        return arr
    return memory


def single(m: Message, what: str) -> None:
    """Rule for Fetch_and_op and Compare_and_swap: exactly one element."""
    if m.count != 1:
        raise ArgumentError(f"{what}: expecting a single element, got {m.count}")


def same_dtype(a: Message, b: Message, what: str) -> None:
    """Rule for one-element calls: every buffer holds the same dtype."""
    if a.dtype != b.dtype:
        raise ArgumentError(f"{what}: dtypes differ ({dtype_of(a.dtype)} vs {dtype_of(b.dtype)})")


def same_shape(a: Message, b: Message, what: str) -> None:
    """Rule for multi-buffer calls: one dtype and one count for all."""
    same_dtype(a, b, what)
    if a.count != b.count:
        raise ArgumentError(f"{what}: counts differ ({a.count} vs {b.count})")
