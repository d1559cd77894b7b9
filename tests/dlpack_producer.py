"""A DLPack producer made with ctypes, every field of its tensor settable,
built the way mpi4py's own test arrays are (test/dlpackimpl.py): the
capsule is a ``PyCapsule`` whose destructor releases an unconsumed tensor,
and the managed tensor lives in Python memory until its deleter runs.

Unlike mpi4py's, this one counts: ``deleted`` (deleter calls for its
tensors), ``exports`` (``__dlpack__`` calls) and, module-wide,
``DOUBLE_DELETES`` (a deleter called for a tensor already released), so a
test can assert that a consumer calls the deleter exactly once, after it no
longer needs the memory, and leaks nothing.
"""

from __future__ import annotations

import ctypes
import weakref
from typing import Any

import numpy as np

c_int64_p = ctypes.POINTER(ctypes.c_int64)


class Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", Device), ("ndim", ctypes.c_int32), ("dtype", DataType),
                ("shape", c_int64_p), ("strides", c_int64_p), ("byte_offset", ctypes.c_uint64)]


Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class Managed(ctypes.Structure):
    _fields_ = [("dl_tensor", Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", Deleter)]


class ManagedVersioned(ctypes.Structure):
    _fields_ = [("version", Version), ("manager_ctx", ctypes.c_void_p), ("deleter", Deleter),
                ("flags", ctypes.c_uint64), ("dl_tensor", Tensor)]


READ_ONLY = 1
IS_COPIED = 2

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
# The destructor sees the dying capsule: only calls that take it by address.
_api.PyCapsule_GetName.restype = ctypes.c_char_p
_api.PyCapsule_GetName.argtypes = [ctypes.c_void_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]

# address of a managed tensor -> (its producer, weakly: a tensor nobody
# releases must not keep the producer's counts from its test; the ctypes
# objects behind the tensor)
_LIVE: dict[int, tuple["weakref.ref[Producer]", tuple[Any, ...]]] = {}
DOUBLE_DELETES = 0


@Deleter
def _deleter(address: int) -> None:
    global DOUBLE_DELETES
    entry = _LIVE.pop(address, None)
    if entry is None:
        DOUBLE_DELETES += 1
        return
    producer = entry[0]()
    if producer is None:
        return
    producer.deleted += 1
    if producer.deleter_raises:
        raise RuntimeError("a deleter that raises")


@ctypes.PYFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule: int) -> None:
    # The protocol: a capsule nobody took still holds its tensor.
    name = _api.PyCapsule_GetName(capsule)
    if name in (b"dltensor", b"dltensor_versioned"):
        address = _api.PyCapsule_GetPointer(capsule, name)
        managed = (ManagedVersioned if name == b"dltensor_versioned" else Managed).from_address(address)
        managed.deleter(address)


_DEFAULT = object()


def _fresh(error: BaseException) -> BaseException:
    # A new exception each time: raising the stored one would hang this
    # call's traceback (and through it the producer) on the producer.
    return type(error)(*error.args)


class Producer:
    """``__dlpack__`` over ``array``'s memory; keyword arguments override
    what the tensor says (``data``: an address, ``ndim``, ``shape``,
    ``strides``: lists of ints, None for NULL, ``code``/``bits``/``lanes``,
    ``device``: (type, id) in the tensor, ``byte_offset``, ``version``:
    (major, minor), ``flags``), how the capsule is named (``name``), what
    ``__dlpack__`` does (``returns``: an object returned instead of a
    capsule; ``raises``: an exception; ``versioned=False``: a DLPack 0.x
    producer that takes no ``max_version``; ``legacy=True``: an unversioned
    capsule whatever was asked; ``reuse=True``: the same capsule every time)
    and ``__dlpack_device__`` (``device_method``: its result, or an
    exception to raise)."""

    def __init__(self, array: np.ndarray, *, versioned: bool = True, legacy: bool = False, reuse: bool = False,
                 name: bytes | None | object = _DEFAULT, returns: Any = _DEFAULT, raises: BaseException | None = None,
                 device_method: Any = (1, 0), deleter_raises: bool = False, **fields: Any) -> None:
        self.array = array
        self.versioned, self.legacy, self.reuse = versioned, legacy, reuse
        self.name, self.returns, self.raises = name, returns, raises
        self.device_method = device_method
        self.deleter_raises = deleter_raises
        self.fields = fields
        self.deleted = 0
        self.exports = 0
        self._capsule: Any = None

    def __dlpack_device__(self) -> Any:
        if isinstance(self.device_method, BaseException):
            raise _fresh(self.device_method)
        return self.device_method

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, copy: Any = None) -> Any:
        if not self.versioned and max_version is not None:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        self.exports += 1
        if self.raises is not None:
            raise _fresh(self.raises)
        if self.returns is not _DEFAULT:
            return self.returns
        if self.reuse and self._capsule is not None:
            return self._capsule
        capsule = self._make(versioned=max_version is not None and not self.legacy)
        if self.reuse:
            self._capsule = capsule
        return capsule

    def _make(self, versioned: bool) -> Any:
        f, a = self.fields, self.array
        shape = f.get("shape", list(a.shape))
        strides = f.get("strides", None)
        keep: list[Any] = []

        def int64s(values: list[int] | None) -> Any:
            if values is None:
                return c_int64_p()
            arr = (ctypes.c_int64 * max(len(values), 1))(*values)
            keep.append(arr)
            return ctypes.cast(arr, c_int64_p)

        tensor = Tensor()
        tensor.data = f.get("data", a.ctypes.data if a.size else None)
        tensor.device = Device(*f.get("device", (1, 0)))
        tensor.ndim = f.get("ndim", len(shape) if shape is not None else 0)
        tensor.dtype = DataType(f.get("code", {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}[a.dtype.kind]),
                                f.get("bits", a.dtype.itemsize * 8), f.get("lanes", 1))
        tensor.shape = int64s(shape)
        tensor.strides = int64s(strides)
        tensor.byte_offset = f.get("byte_offset", 0)
        if versioned:
            managed: Any = ManagedVersioned()
            managed.version = Version(*f.get("version", (1, 0)))
            managed.flags = f.get("flags", 0)
            default_name = b"dltensor_versioned"
        else:
            managed = Managed()
            default_name = b"dltensor"
        managed.dl_tensor = tensor
        managed.deleter = _deleter
        address = ctypes.addressof(managed)
        _LIVE[address] = (weakref.ref(self), (managed, *keep))
        name = default_name if self.name is _DEFAULT else self.name
        return _api.PyCapsule_New(address, name, ctypes.cast(_capsule_destructor, ctypes.c_void_p))

    @property
    def live(self) -> int:
        """Tensors of this producer whose deleter has not run yet."""
        return sum(1 for producer, _ in _LIVE.values() if producer() is self)
