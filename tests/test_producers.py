"""Every buffer a user can hand us (issue 24): good producers of every kind
move the right bytes, and a corpus of hostile ones each raise their
documented error, before anything is sent, leaking nothing.

Leaking nothing means, for every producer: the reference counts of the
object and of the memory behind it are what they were before the call;
a DLPack tensor's deleter runs exactly once (by onesided when it took the
capsule, by the capsule's own destructor when it refused it; never twice,
and never for a capsule named ``used_...``, which is not ours to release);
and the window's memory is unchanged by a refused call. Errors are
``onesided.Error`` subclasses, or the exception the producer's own code
raised; never ``SystemError``.

The producers are built with ctypes the way mpi4py's own test arrays are
(tests/dlpack_producer.py), so a consumer that lets the capsule go while it
still needs the tensor (numpy's from_dlpack does) reads freed memory here,
as it did on mpi4py's DLPackArray.
"""

from __future__ import annotations

import array
import ctypes
import gc
import sys
from typing import Any, Callable

import numpy as np
import pytest

import dlpack_producer as dl
import onesided
from dlpack_producer import IS_COPIED, READ_ONLY, Producer
from onesided import ArgumentError, ArgumentTypeError, BufferArgumentError, UnsupportedError, Window

i8 = np.int64


@pytest.fixture(scope="module")
def win() -> Any:
    w = Window.Allocate(64, 1)
    w.Lock_all()
    yield w
    w.Unlock_all()
    w.Free()


def memory(win: Any) -> bytes:
    return bytes(np.frombuffer(win, np.uint8))


def clear(win: Any) -> None:
    np.frombuffer(win, np.uint8)[:] = 0


# -- good producers: the right bytes, the deleter once --------------------------------------------------------------

def values(n: int = 4, dtype: Any = i8) -> np.ndarray:
    return np.arange(1, n + 1, dtype=dtype)


GOOD: list[tuple[str, Callable[[], Producer], np.ndarray]] = [
    ("versioned", lambda: Producer(values()), values()),
    ("unversioned (DLPack 0.x, no max_version)", lambda: Producer(values(), versioned=False), values()),
    ("legacy capsule though max_version was given", lambda: Producer(values(), legacy=True), values()),
    ("byte_offset one element in", lambda: Producer(values(), shape=[3], byte_offset=8), values()[1:]),
    ("every other element (strides [2])", lambda: Producer(values(), shape=[2], strides=[2]), values()[::2]),
    ("negative stride", lambda: Producer(values(), shape=[4], strides=[-1], byte_offset=24), values()[::-1]),
    ("2-D C order", lambda: Producer(values(), shape=[2, 2]), values()),
    ("2-D with explicit C strides", lambda: Producer(values(), shape=[2, 2], strides=[2, 1]), values()),
    ("0-d (scalar, NULL shape)", lambda: Producer(values(1), shape=None, ndim=0), values(1)),
    ("float64", lambda: Producer(values(dtype=np.float64)), values(dtype=np.float64)),
    ("uint16", lambda: Producer(values(dtype=np.uint16)), values(dtype=np.uint16)),
    ("complex128", lambda: Producer(values(dtype=np.complex128)), values(dtype=np.complex128)),
    ("complex64 as two float32 lanes", lambda: Producer(values(dtype=np.complex64), code=2, bits=32, lanes=2),
     values(dtype=np.complex64)),
    ("bool", lambda: Producer(np.array([True, False, True])), np.array([True, False, True])),
    ("read-only flag, read", lambda: Producer(values(), flags=READ_ONLY), values()),
    ("pinned host memory (kDLCUDAHost)", lambda: Producer(values(), device=(3, 0), device_method=(3, 0)),
     values()),
]


@pytest.mark.parametrize("name, make, expected", GOOD, ids=[g[0] for g in GOOD])
def test_good_producer_put(win: Any, name: str, make: Callable[[], Producer], expected: np.ndarray) -> None:
    clear(win)
    producer = make()
    refs = sys.getrefcount(producer), sys.getrefcount(producer.array)
    win.Put(producer, 0)
    win.Flush(0)
    gc.collect()
    refs_after = sys.getrefcount(producer), sys.getrefcount(producer.array)
    got = np.frombuffer(win, np.uint8)[: expected.nbytes].view(expected.dtype)
    assert np.array_equal(got, expected)
    assert (producer.exports, producer.deleted, producer.live, dl.DOUBLE_DELETES) == (1, 1, 0, 0)
    assert refs_after == refs


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_deleter_that_raises_does_not_fail_the_call(win: Any) -> None:
    clear(win)
    producer = Producer(values(), deleter_raises=True)
    win.Put(producer, 0)  # the deleter's exception is unraisable: reported, not raised
    win.Flush(0)
    gc.collect()
    assert (producer.deleted, producer.live) == (1, 0)
    assert np.frombuffer(win, i8)[:4].tolist() == [1, 2, 3, 4]


def test_good_producer_get_writes_the_producers_memory(win: Any) -> None:
    clear(win)
    np.frombuffer(win, i8)[:4] = [7, 8, 9, 10]
    target = np.zeros(6, i8)
    producer = Producer(target, shape=[4], byte_offset=8)  # elements 1..4 of target
    win.Get(producer, 0)
    win.Flush(0)
    gc.collect()
    assert target.tolist() == [0, 7, 8, 9, 10, 0]
    assert (producer.deleted, producer.live) == (1, 0)


def test_mpi4py_style_owned_capsule(win: Any) -> None:
    """mpi4py's DLPackArray: its capsule holds the managed tensor, so the
    tensor is freed with the capsule. Taking the capsule and letting it go
    (numpy's from_dlpack) then calls the deleter on freed memory; onesided
    keeps the capsule until the deleter has run."""
    clear(win)
    for _ in range(50):  # freed memory is reused quickly: a wrong consumer crashes or miscounts here
        producer = Producer(values())
        win.Put(producer, 0)
        win.Fetch_and_op(Producer(np.array([5], i8)), Producer(np.zeros(1, i8)), 0, 32)
        win.Flush(0)
        gc.collect()
        assert (producer.deleted, producer.live, dl.DOUBLE_DELETES) == (1, 0, 0)
    assert np.frombuffer(win, i8)[:4].tolist() == [1, 2, 3, 4]


def test_origin_freed_with_its_last_reference_outlives_the_call() -> None:
    """A producer whose memory goes with its last reference, as the origin
    of an Rput whose request is waited on later: the memory (and the
    tensor) stays until the operation no longer needs it, then the deleter
    runs once."""
    win = Window.Allocate(64, 1, info={"onesided_shared_memory": "off"})
    try:
        assert not win._completes_in_call  # the operation can outlive its call here
        win.Lock_all()
        producer = Producer(values())
        counts = producer  # the test's handle on the counters; the array goes below
        request = win.Rput(producer, 0)
        del producer
        counts.array = None  # the producer's own reference to its memory
        gc.collect()
        assert counts.deleted == 0 and counts.live == 1  # still in use
        request.Wait()
        del request
        gc.collect()
        win.Flush(0)
        gc.collect()
        assert (counts.deleted, counts.live, dl.DOUBLE_DELETES) == (1, 0, 0)
        win.Unlock_all()
        assert np.frombuffer(win, i8)[:4].tolist() == [1, 2, 3, 4]
    finally:
        win.Free()


def test_create_window_over_a_producer() -> None:
    producer = Producer(np.zeros(8, i8))
    win = Window.Create(producer, 8)
    try:
        win.Lock(0)
        win.Put(np.array([42], i8), 0, 3)
        win.Unlock(0)
        assert producer.array[3] == 42
        assert producer.deleted == 0  # the window still exposes it
    finally:
        win.Free()
    # The window object keeps its memory (views of it made through the
    # buffer protocol may still point there) until it goes.
    del win
    gc.collect()
    assert (producer.deleted, producer.live) == (1, 0)


# -- hostile producers ------------------------------------------------------------------------------------------

class Boom(Exception):
    """A producer's own exception, which must reach the caller as it is."""


class ArrayInterface:
    def __init__(self, interface: Any, name: str = "__array_interface__") -> None:
        setattr(self, name, interface)


class RaisingInterface:
    @property
    def __array_interface__(self) -> Any:
        raise Boom("__array_interface__")


class OldBuffer:
    """Python 3.12's __buffer__: on 3.11 not a buffer at all."""

    def __buffer__(self, flags: int) -> Any:
        raise Boom("__buffer__")


class Index:
    def __init__(self, value: Any) -> None:
        self.value = value

    def __index__(self) -> Any:
        if isinstance(self.value, BaseException):
            raise type(self.value)(*self.value.args)  # a fresh one: see dlpack_producer._fresh
        return self.value


def released() -> memoryview:
    m = memoryview(bytearray(8))
    m.release()
    return m


def address(n: int) -> dict[str, Any]:
    return {"data": (n, False), "shape": (4,), "typestr": "<i8", "version": 3}


A = values  # the memory behind a producer
KEPT = np.zeros(8, i8)  # memory that stays mapped, for interfaces that are wrong in other ways
UNMAPPED = 1 << 46  # far from anything this process maps (addresses stop at 2**47)

# (name, the origin spec, the error, deleter calls expected afterwards, writable: used as Get's origin)
HOSTILE: list[tuple[str, Callable[[], Any], type[BaseException], int, bool]] = [
    # __dlpack__ itself
    ("__dlpack__ raises", lambda: Producer(A(), raises=Boom("export")), Boom, 0, False),
    ("__dlpack__ raises TypeError both ways", lambda: Producer(A(), raises=TypeError("no")), TypeError, 0, False),
    ("__dlpack__ raises MemoryError", lambda: Producer(A(), raises=MemoryError()), MemoryError, 0, False),
    ("__dlpack__ returns None", lambda: Producer(A(), returns=None), ArgumentTypeError, 0, False),
    ("__dlpack__ returns an int", lambda: Producer(A(), returns=5), ArgumentTypeError, 0, False),
    ("__dlpack__ returns bytes", lambda: Producer(A(), returns=b"dltensor"), ArgumentTypeError, 0, False),
    ("__dlpack__ returns an ndarray", lambda: Producer(A(), returns=np.zeros(4)), ArgumentTypeError, 0, False),
    ("__dlpack__ returns a foreign capsule",
     lambda: Producer(A(), returns=ctypes.pythonapi.PyCapsule_New(8, b"other", None)), BufferArgumentError, 0, False),
    # the capsule
    ("capsule named wrongly", lambda: Producer(A(), name=b"tensor"), BufferArgumentError, 0, False),
    ("capsule with no name", lambda: Producer(A(), name=None), BufferArgumentError, 0, False),
    ("capsule already used", lambda: Producer(A(), name=b"used_dltensor"), BufferArgumentError, 0, False),
    ("versioned capsule already used", lambda: Producer(A(), name=b"used_dltensor_versioned"),
     BufferArgumentError, 0, False),
    ("extent far past the mapping", lambda: Producer(A(), shape=[1 << 50]), BufferArgumentError, 1, False),
    ("version 2.0", lambda: Producer(A(), version=(2, 0)), BufferArgumentError, 1, False),
    ("version 0.8 in a versioned capsule", lambda: Producer(A(), version=(0, 8)), BufferArgumentError, 1, False),
    # device
    ("__dlpack_device__ says CUDA", lambda: Producer(A(), device_method=(2, 0)), BufferArgumentError, 0, False),
    ("__dlpack_device__ says Metal", lambda: Producer(A(), device_method=(8, 0)), BufferArgumentError, 0, False),
    ("__dlpack_device__ raises", lambda: Producer(A(), device_method=Boom("device")), Boom, 0, False),
    ("__dlpack_device__ returns a str", lambda: Producer(A(), device_method="cpu"), ArgumentTypeError, 0, False),
    ("__dlpack_device__ returns 3 items", lambda: Producer(A(), device_method=(1, 0, 0)), ArgumentTypeError, 0,
     False),
    ("__dlpack_device__ returns a float", lambda: Producer(A(), device_method=(1.0, 0)), ArgumentTypeError, 0,
     False),
    ("tensor on CUDA though the device said CPU", lambda: Producer(A(), device=(2, 0)), BufferArgumentError, 1,
     False),
    ("tensor on OpenCL", lambda: Producer(A(), device=(4, 0)), BufferArgumentError, 1, False),
    # ndim and shape
    ("negative ndim", lambda: Producer(A(), ndim=-1), BufferArgumentError, 1, False),
    ("ndim 40", lambda: Producer(A(), ndim=40, shape=[1] * 40), BufferArgumentError, 1, False),
    ("NULL shape with ndim 1", lambda: Producer(A(), shape=None, ndim=1), BufferArgumentError, 1, False),
    ("negative extent", lambda: Producer(A(), shape=[-4]), BufferArgumentError, 1, False),
    ("shape overflowing 64 bits", lambda: Producer(A(), shape=[1 << 40, 1 << 40]), BufferArgumentError, 1, False),
    # data, byte_offset, strides
    ("NULL data with shape (4,)", lambda: Producer(A(), data=None), BufferArgumentError, 1, False),
    ("NULL data with shape (4,), as a result", lambda: Producer(A(), data=None), BufferArgumentError, 1, True),
    ("data at address 8", lambda: Producer(A(), data=8), BufferArgumentError, 1, False),
    ("data far from any mapping", lambda: Producer(A(), data=UNMAPPED), BufferArgumentError, 1, False),
    ("data wrapping the address space", lambda: Producer(A(), data=2**64 - 16), BufferArgumentError, 1, False),
    ("byte_offset 2**63", lambda: Producer(A(), byte_offset=2**63), BufferArgumentError, 1, False),
    ("byte_offset past the mapping", lambda: Producer(A(), byte_offset=UNMAPPED), BufferArgumentError, 1, False),
    ("byte_offset wrapping", lambda: Producer(A(), byte_offset=2**64 - 8), BufferArgumentError, 1, False),
    ("stride reaching unmapped memory", lambda: Producer(A(), shape=[2], strides=[1 << 44]),
     BufferArgumentError, 1, False),
    ("negative stride below address 0", lambda: Producer(A(), shape=[2], strides=[-(1 << 60)]),
     BufferArgumentError, 1, False),
    ("stride overflowing bytes", lambda: Producer(A(), shape=[2], strides=[1 << 62]), BufferArgumentError, 1,
     False),
    ("stride x extent overflowing", lambda: Producer(A(), shape=[1 << 20], strides=[1 << 50]),
     BufferArgumentError, 1, False),
    # dtype
    ("opaque handle dtype", lambda: Producer(A(), code=3), UnsupportedError, 1, False),
    ("bfloat16", lambda: Producer(A(), code=4, bits=16), UnsupportedError, 1, False),
    ("int of 7 bits", lambda: Producer(A(), bits=7), UnsupportedError, 1, False),
    ("int of 128 bits", lambda: Producer(A(), bits=128), UnsupportedError, 1, False),
    ("float of 8 bits", lambda: Producer(A(), code=2, bits=8), UnsupportedError, 1, False),
    ("lanes 4", lambda: Producer(A(), lanes=4), UnsupportedError, 1, False),
    ("lanes 0", lambda: Producer(A(), lanes=0), UnsupportedError, 1, False),
    ("bool of 16 bits", lambda: Producer(A(), code=6, bits=16), UnsupportedError, 1, False),
    ("dtype code 99", lambda: Producer(A(), code=99), UnsupportedError, 1, False),
    ("complex of 32 bits", lambda: Producer(A(), code=5, bits=32), UnsupportedError, 1, False),
    # flags and reuse
    ("READ_ONLY tensor as a Get origin", lambda: Producer(A(), flags=READ_ONLY), BufferArgumentError, 1, True),
    ("IS_COPIED tensor as a Get origin", lambda: Producer(A(), flags=IS_COPIED), BufferArgumentError, 1, True),
    ("the same capsule twice", "reuse", BufferArgumentError, 0, False),  # the first consumer owns it
    # array interfaces
    ("__array_interface__ at address 0", lambda: ArrayInterface(address(0)), BufferArgumentError, 0, False),
    ("__array_interface__ at address 8", lambda: ArrayInterface(address(8)), BufferArgumentError, 0, False),
    ("__array_interface__ far from any mapping", lambda: ArrayInterface(address(UNMAPPED)), BufferArgumentError, 0,
     False),
    ("__array_interface__ not a dict", lambda: ArrayInterface([1, 2]), ArgumentTypeError, 0, False),
    ("__array_interface__ without typestr", lambda: ArrayInterface({"data": (8, False), "shape": (4,)}),
     ArgumentTypeError, 0, False),
    ("__array_interface__ with a negative shape", lambda: ArrayInterface({**address(8), "shape": (-4,)}),
     ArgumentError, 0, False),
    ("__array_interface__ with a float address", lambda: ArrayInterface({**address(8), "data": (8.0, False)}),
     ArgumentTypeError, 0, False),
    ("__array_interface__ float16", lambda: ArrayInterface({**address(KEPT.ctypes.data), "typestr": "<f2"}),
     UnsupportedError, 0, False),
    ("__array_interface__ raises", lambda: RaisingInterface(), Boom, 0, False),
    ("__cuda_array_interface__ on the device", lambda: ArrayInterface(address(UNMAPPED),
                                                                      "__cuda_array_interface__"),
     BufferArgumentError, 0, False),
    # the buffer protocol
    ("__buffer__ (not a buffer before Python 3.12)", lambda: OldBuffer(), ArgumentTypeError, 0, False),
    ("a released memoryview", released, BufferArgumentError, 0, False),
    ("bytes as a Get origin", lambda: b"12345678", BufferArgumentError, 0, True),
    ("a non-contiguous view numpy cannot read",
     lambda: memoryview((ctypes.c_void_p * 4)()).cast("B").cast("P")[::2], BufferArgumentError, 0, False),
    ("an object that is no buffer", lambda: object(), ArgumentTypeError, 0, False),
    ("a list", lambda: [1, 2, 3], ArgumentTypeError, 0, False),
    # __index__ in counts and displacements
    ("count whose __index__ raises", lambda: [np.zeros(4, i8), Index(Boom("count"))], Boom, 0, False),
    ("count whose __index__ returns a float", lambda: [np.zeros(4, i8), Index(1.5)], ArgumentTypeError, 0, False),
    ("displ whose __index__ raises", lambda: [np.zeros(4, i8), (1, Index(Boom("displ")))], Boom, 0, False),
    ("count past a DLPack tensor", lambda: [Producer(A()), 5], ArgumentError, 1, False),
]


def _origin(case: Any) -> Any:
    if case == "reuse":
        p = Producer(A(), reuse=True)
        p.__dlpack__()  # a first consumer took it (a capsule that is not named used_ would be taken again)
        capsule = p._capsule
        ctypes.pythonapi.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
        ctypes.pythonapi.PyCapsule_SetName(capsule, b"used_dltensor_versioned")
        return p
    return case()


@pytest.mark.parametrize("name, make, error, deleted, writable", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_producer(win: Any, name: str, make: Any, error: type[BaseException], deleted: int,
                          writable: bool) -> None:
    origin = _origin(make)
    producer = origin if isinstance(origin, Producer) else next(
        (x for x in origin if isinstance(x, Producer)), None) if isinstance(origin, list) else None
    np.frombuffer(win, np.uint8)[:] = 0x5A
    before = memory(win)
    refs = sys.getrefcount(origin)
    array_refs = sys.getrefcount(producer.array) if producer is not None else 0
    call = win.Get if writable else win.Put
    # Not pytest.raises: its ExceptionInfo keeps the traceback, and with it
    # the frames that refer to the origin, past this test's count.
    try:
        call(origin, 0)
    except BaseException as e:
        raised: tuple[type[BaseException], str] | None = (type(e), str(e))
    else:
        raised = None
    assert raised is not None, f"{name}: no error"
    assert issubclass(raised[0], error), f"{name}: {raised}"
    assert not issubclass(raised[0], SystemError)
    if not issubclass(error, onesided.Error):
        assert not issubclass(raised[0], onesided.Error)  # the producer's own exception, as it was raised
    win.Flush(0)
    gc.collect()
    assert memory(win) == before, "a refused call changed the window"
    # Counted before asserting: pytest's rewritten asserts hold what they look at.
    refs_after = sys.getrefcount(origin)
    array_refs_after = sys.getrefcount(producer.array) if producer is not None else 0
    assert refs_after == refs
    if producer is not None:
        if name == "the same capsule twice":
            assert producer.exports == 2
        assert producer.deleted == deleted, f"deleter ran {producer.deleted} times, expected {deleted}"
        assert array_refs_after == array_refs
    assert dl.DOUBLE_DELETES == 0


def test_the_corpus_is_large_enough() -> None:
    assert len(HOSTILE) >= 60


@pytest.mark.parametrize("name, make, error, deleted, writable",
                         [h for h in HOSTILE if isinstance(h[1], Callable) and h[0].startswith(("__dlpack__ r",
                                                                                                 "NULL data"))],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_hostile_producer_as_window_memory(name: str, make: Any, error: type[BaseException], deleted: int,
                                           writable: bool) -> None:
    """Window creation takes memory from the same one place."""
    with pytest.raises(error if error is not BufferArgumentError or not writable else BufferArgumentError):
        Window.Create(make(), 1)


def test_proc_null_checks_every_other_argument(win: Any) -> None:
    """A PROC_NULL target moves nothing but validates what it is given: the
    boundary ranks of a halo exchange raise what its interior ranks do."""
    null = onesided.PROC_NULL
    buf = np.zeros(4, i8)
    hostile: list[tuple[Callable[[], Any], type[BaseException]]] = [
        (lambda: win.Put([1, 2, 3], null), ArgumentTypeError),
        (lambda: win.Put(buf, null, 1.5), ArgumentTypeError),
        (lambda: win.Put([buf, "not a dtype"], null), TypeError),
        (lambda: win.Put(Producer(A(), data=None), null), BufferArgumentError),
        (lambda: win.Get(b"read-only", null), BufferArgumentError),
        (lambda: win.Accumulate(buf, null, op=object()), onesided.Error),
        (lambda: win.Accumulate(buf, null, (0, 3)), ArgumentError),
        (lambda: win.Fetch_and_op(buf, np.zeros(1, i8), null), ArgumentError),
        (lambda: win.Fetch_and_op(buf[:1], np.zeros(1, np.int32), null), ArgumentError),
        (lambda: win.Fetch_and_op(buf[:1], np.zeros(1, i8), null, 0.0), ArgumentTypeError),
        (lambda: win.Compare_and_swap(buf[:1], buf[:2], np.zeros(1, i8), null), ArgumentError),
        (lambda: win.Get_accumulate(buf, np.zeros(3, i8), null), ArgumentError),
        (lambda: win.Rput([1, 2], null), ArgumentTypeError),
        (lambda: win.Put(buf, -1.0), ArgumentTypeError),
        (lambda: win.Put(buf, True), ArgumentTypeError),
        (lambda: win.Put(buf, null, [0, 1, 2, 3]), ArgumentTypeError),
        (lambda: win.Put_notify([1], null), onesided.Error),
    ]
    for call, error in hostile:
        with pytest.raises(error):
            call()
    # What MPI programs pass toward PROC_NULL still works: no memory at all.
    win.Put(None, null)
    win.Accumulate([None, np.int64], null, None, onesided.SUM)
    win.Get_accumulate(None, [None, 0, np.int64], null)
    win.Rput(None, null).Wait()
    win.Put(buf, null)


def test_bytearray_cannot_be_resized_while_an_operation_uses_it() -> None:
    win = Window.Allocate(64, 1, info={"onesided_shared_memory": "off"})
    try:
        win.Lock_all()
        data = bytearray(b"abcdefgh")
        request = win.Rput(data, 0)
        request.Wait()
        win.Flush(0)
        del request
        gc.collect()
        data.extend(b"more")  # the export ended with the operation
        win.Unlock_all()
        assert bytes(np.frombuffer(win, np.uint8)[:8]) == b"abcdefgh"
    finally:
        win.Free()


def test_array_array_and_memoryview_formats(win: Any) -> None:
    clear(win)
    win.Put(array.array("i", [1, 2]), 0)
    win.Put(memoryview(np.array([3], i8)), 0, 8)
    win.Flush(0)
    assert np.frombuffer(win, np.int32)[:2].tolist() == [1, 2]
    assert np.frombuffer(win, i8)[1] == 3


def test_get_address_of_empty_memory_is_zero() -> None:
    """MPI.Get_address of an empty memory object: a dynamic window's
    tomemory() has address 0 (as WIN_BASE), and Get_address says so."""
    win = Window.Create_dynamic()
    try:
        assert onesided.Get_address(win.tomemory()) == 0
        data = np.zeros(4, i8)
        assert onesided.Get_address(data) == data.ctypes.data
        assert onesided.Get_address(data[2:]) == data.ctypes.data + 16
    finally:
        win.Free()
    with pytest.raises(ArgumentTypeError):
        onesided.Get_address(object())
