"""Cases for the RMA calls: Put, Get, the accumulates, the atomics, MPI.PROC_NULL targets, R* requests."""

from __future__ import annotations

import array
import time
from typing import Any, Callable

from ._support import SPIN_DEADLINE, attempt, case, fence_op, keep, lock_op, window


# -- Put ---------------------------------------------------------------------------------


def _put_case(name: str, make_origin: Callable[..., Any], target: Any = None, kind: str = "Create",
              dtype: str = "i") -> None:
    def fn(Win, MPI, comm, np):
        def op(win, peer, rank):
            origin = keep(make_origin(MPI, np, rank))
            if target is None:
                return win.Put(origin, peer)
            return win.Put(origin, peer, target(MPI) if callable(target) else target)

        return fence_op(Win, MPI, comm, np, op, kind=kind, dtype=dtype)

    fn.__name__ = name
    case(fn)


def _ints(np, rank, n=3):
    return np.arange(1, n + 1, dtype="i") + 10 * rank


_put_case("put_numpy", lambda MPI, np, r: _ints(np, r))
_put_case("put_numpy_allocate", lambda MPI, np, r: _ints(np, r), kind="Allocate")
_put_case("put_bytes", lambda MPI, np, r: _ints(np, r).tobytes())
_put_case("put_bytearray", lambda MPI, np, r: bytearray(_ints(np, r).tobytes()))
_put_case("put_array_array", lambda MPI, np, r: array.array("i", _ints(np, r).tolist()))
_put_case("put_list_buf_datatype", lambda MPI, np, r: [_ints(np, r), MPI.INT])
_put_case("put_tuple_buf_datatype", lambda MPI, np, r: (_ints(np, r), MPI.INT))
_put_case("put_buf_count_datatype", lambda MPI, np, r: [_ints(np, r, 4), 2, MPI.INT])
_put_case("put_buf_count_displ_datatype", lambda MPI, np, r: [_ints(np, r, 4), (2, 1), MPI.INT])
_put_case("put_bytearray_count_datatype", lambda MPI, np, r: [bytearray(_ints(np, r).tobytes()), 2, MPI.INT])
_put_case("put_double_buf_count_datatype",
          lambda MPI, np, r: [np.array([0.5, 1.5, 2.5]) + r, 3, MPI.DOUBLE], dtype="d")
_put_case("put_target_disp", lambda MPI, np, r: _ints(np, r, 2), target=3)
_put_case("put_target_disp_tuple", lambda MPI, np, r: _ints(np, r, 2), target=(3,))
_put_case("put_target_disp_count", lambda MPI, np, r: _ints(np, r, 2), target=(4, 2))
_put_case("put_target_disp_count_datatype", lambda MPI, np, r: _ints(np, r, 2),
          target=lambda MPI: (5, 2, MPI.INT))
_put_case("put_target_list", lambda MPI, np, r: _ints(np, r, 2), target=[2, 2])
_put_case("put_bytes_target_disp", lambda MPI, np, r: _ints(np, r, 2).tobytes(), target=1)


class DLPackOnly:
    """An array reachable only through DLPack (no buffer protocol), over host
    memory: mpi4py takes such objects as buffers."""

    def __init__(self, array: Any) -> None:
        self._array = array

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self._array.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> Any:
        return self._array.__dlpack_device__()


class CudaArrayInterfaceOnly:
    """An array reachable only through ``__cuda_array_interface__`` (no buffer
    protocol), describing host memory: mpi4py takes such objects as buffers."""

    def __init__(self, array: Any) -> None:
        self._array = array

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        interface = dict(self._array.__array_interface__)
        interface.update(version=3, stream=None)
        return interface


_put_case("put_dlpack", lambda MPI, np, r: DLPackOnly(_ints(np, r)))
_put_case("put_dlpack_in_list", lambda MPI, np, r: [DLPackOnly(_ints(np, r, 4)), 2, MPI.INT])
_put_case("put_cuda_array_interface_in_list", lambda MPI, np, r: [CudaArrayInterfaceOnly(_ints(np, r)), MPI.INT])
_put_case("put_bytes_datatype", lambda MPI, np, r: [_ints(np, r).tobytes(), MPI.INT])


@case
def put_none_origin_to_rank(Win, MPI, comm, np):
    """A None origin to a real rank: TypeError."""
    return fence_op(Win, MPI, comm, np, lambda w, peer, rank: w.Put(None, peer))


@case
def put_str_origin(Win, MPI, comm, np):
    """A str is not a buffer: TypeError."""
    return fence_op(Win, MPI, comm, np, lambda w, peer, rank: w.Put("abcd", peer))


@case
def put_target_rank_str(Win, MPI, comm, np):
    """target_rank must be an int: TypeError."""
    return fence_op(Win, MPI, comm, np, lambda w, peer, rank: w.Put(np.ones(1, "i"), str(peer)))


@case
def put_rank_out_of_range(Win, MPI, comm, np):
    """target_rank == comm size: an MPI error."""
    return fence_op(Win, MPI, comm, np, lambda w, peer, rank: w.Put(np.ones(1, "i"), comm.Get_size()))


@case
def put_rank_negative(Win, MPI, comm, np):
    return fence_op(Win, MPI, comm, np, lambda w, peer, rank: w.Put(np.ones(1, "i"), -5))


# -- Get -------------------------------------------------------------------------------


def _get_case(name: str, make_result: Callable[..., Any], target: Any = None, read: Callable[[Any], Any] = None,
              kind: str = "Create", dtype: str = "i") -> None:
    def fn(Win, MPI, comm, np):
        def op(win, peer, rank):
            spec = keep(make_result(MPI, np))
            buf = spec[0] if isinstance(spec, list) else spec
            if target is None:
                win.Get(spec, peer)
            else:
                win.Get(spec, peer, target(MPI) if callable(target) else target)
            return buf

        return fence_op(Win, MPI, comm, np, op, kind=kind, dtype=dtype)

    fn.__name__ = name
    case(fn)


_get_case("get_numpy", lambda MPI, np: np.full(3, -1, "i"))
_get_case("get_numpy_allocate", lambda MPI, np: np.full(3, -1, "i"), kind="Allocate")
_get_case("get_bytearray", lambda MPI, np: bytearray(8), target=1)
_get_case("get_array_array", lambda MPI, np: array.array("i", [-1, -1]), target=2)
_get_case("get_list_buf_datatype", lambda MPI, np: [np.full(2, -1, "i"), MPI.INT], target=lambda MPI: (1, 2, MPI.INT))
_get_case("get_buf_count_datatype", lambda MPI, np: [np.full(4, -1, "i"), 2, MPI.INT], target=(3, 2))
_get_case("get_buf_count_displ_datatype", lambda MPI, np: [np.full(6, -1, "i"), (3, 2), MPI.INT], target=1)
_get_case("get_double_buf_datatype", lambda MPI, np: [np.zeros(2), MPI.DOUBLE], target=(6,), dtype="d")
_get_case("get_target_disp_count", lambda MPI, np: np.full(2, -1, "i"), target=(5, 2))


_get_case("get_bytearray_datatype", lambda MPI, np: [bytearray(8), MPI.INT], target=3)


@case
def get_dlpack(Win, MPI, comm, np):
    def op(win, peer, rank):
        buf = keep(np.full(3, -1, "i"))
        win.Get(keep(DLPackOnly(buf)), peer, 2)
        return buf

    return fence_op(Win, MPI, comm, np, op)


@case
def get_cuda_array_interface_in_list(Win, MPI, comm, np):
    def op(win, peer, rank):
        buf = keep(np.full(2, -1, "i"))
        win.Get([keep(CudaArrayInterfaceOnly(buf)), MPI.INT], peer, 4)
        return buf

    return fence_op(Win, MPI, comm, np, op)


@case
def fetch_and_op_dlpack(Win, MPI, comm, np):
    def op(win, peer, rank):
        one, result = keep(np.ones(1, "i")), keep(np.zeros(1, "i"))
        win.Fetch_and_op(keep(DLPackOnly(one)), keep(DLPackOnly(result)), peer, 3)
        return result

    return fence_op(Win, MPI, comm, np, op)


@case
def get_into_bytes(Win, MPI, comm, np):
    """A read-only result buffer: BufferError."""
    return fence_op(Win, MPI, comm, np, lambda w, peer, rank: w.Get(b"\0" * 4, peer))


# -- Accumulate, Get_accumulate -------------------------------------------------------------


def _acc_case(name: str, op_name: str | None, make_origin: Callable[..., Any] = None, target: Any = None,
              dtype: str = "i") -> None:
    def fn(Win, MPI, comm, np):
        def op(win, peer, rank):
            origin = keep(make_origin(MPI, np, rank) if make_origin else np.array([5, 6, 150], dtype) + rank)
            t = target(MPI) if callable(target) else target
            if op_name is None:
                return win.Accumulate(origin, peer) if t is None else win.Accumulate(origin, peer, t)
            return win.Accumulate(origin, peer, t, getattr(MPI, op_name))

        return fence_op(Win, MPI, comm, np, op, dtype=dtype)

    fn.__name__ = name
    case(fn)


_acc_case("accumulate_default_op_sum", None)
for _op in ("SUM", "PROD", "MAX", "MIN", "REPLACE", "BAND", "BOR", "BXOR", "LAND", "LOR", "LXOR", "NO_OP"):
    _acc_case(f"accumulate_{_op.lower()}", _op, target=2)
_acc_case("accumulate_double_sum", "SUM", lambda MPI, np, r: np.array([0.25, 0.5]) + r, target=1, dtype="d")
_acc_case("accumulate_list_buf_datatype", "SUM", lambda MPI, np, r: [np.array([1, 2], "i") + r, MPI.INT],
          target=lambda MPI: (1, 2, MPI.INT))
_acc_case("accumulate_buf_count_displ_datatype", "SUM",
          lambda MPI, np, r: [np.array([1, 2, 3, 4], "i") + r, (2, 2), MPI.INT], target=(4,))
_acc_case("accumulate_array_array", "REPLACE", lambda MPI, np, r: array.array("i", [7 + r, 8 + r]), target=6)


@case
def accumulate_op_not_an_op(Win, MPI, comm, np):
    """op must be an MPI.Op: TypeError."""
    return fence_op(Win, MPI, comm, np, lambda w, peer, rank: w.Accumulate(np.ones(1, "i"), peer, None, "sum"))


@case
def accumulate_op_null(Win, MPI, comm, np):
    return fence_op(Win, MPI, comm, np, lambda w, peer, rank: w.Accumulate(np.ones(1, "i"), peer, None, MPI.OP_NULL))


@case
def accumulate_user_defined_op(Win, MPI, comm, np):
    """User-defined ops are not allowed in accumulate calls: an MPI error."""
    op = MPI.Op.Create(lambda a, b, datatype: None, commute=True)
    try:
        return fence_op(Win, MPI, comm, np, lambda w, peer, rank: w.Accumulate(np.ones(1, "i"), peer, None, op))
    finally:
        op.Free()


def _gacc_case(name: str, op_name: str | None, target: Any = 1, spec: bool = False) -> None:
    def fn(Win, MPI, comm, np):
        def op(win, peer, rank):
            origin = keep(np.array([3, 4], "i") + rank)
            result = keep(np.full(2, -1, "i"))
            o, r = ([origin, MPI.INT], [result, 2, MPI.INT]) if spec else (origin, result)
            t = target(MPI) if callable(target) else target
            if op_name is None:
                win.Get_accumulate(o, r, peer, t)
            else:
                win.Get_accumulate(o, r, peer, t, getattr(MPI, op_name))
            return result

        return fence_op(Win, MPI, comm, np, op)

    fn.__name__ = name
    case(fn)


_gacc_case("get_accumulate_default_op_sum", None)
_gacc_case("get_accumulate_replace", "REPLACE", target=(2,))
_gacc_case("get_accumulate_no_op", "NO_OP", target=(3, 2))
_gacc_case("get_accumulate_max", "MAX", target=lambda MPI: (4, 2, MPI.INT))
_gacc_case("get_accumulate_buffer_specs", "SUM", target=5, spec=True)


# -- Fetch_and_op, Compare_and_swap -------------------------------------------------------------


def _fop_case(name: str, op_name: str | None, disp: int | None = None, kind: str = "numpy",
              dtype: str = "i") -> None:
    def fn(Win, MPI, comm, np):
        def op(win, peer, rank):
            if kind == "array":
                origin, result = array.array(dtype, [5 + rank]), array.array(dtype, [0])
            else:
                origin, result = np.array([5 + rank], dtype), np.zeros(1, dtype)
            keep((origin, result))
            o, r = (origin, result)
            if kind == "spec":
                t = {"i": MPI.INT, "l": MPI.LONG, "d": MPI.DOUBLE}[dtype]
                o, r = [origin, t], [result, 1, t]
            args = [o, r, peer]
            if disp is not None:
                args.append(disp)
            if op_name is not None:
                if disp is None:
                    args.append(0)
                args.append(getattr(MPI, op_name))
            win.Fetch_and_op(*args)
            return result

        return fence_op(Win, MPI, comm, np, op, dtype=dtype)

    fn.__name__ = name
    case(fn)


_fop_case("fetch_and_op_default", None)
_fop_case("fetch_and_op_disp", None, disp=3)
_fop_case("fetch_and_op_sum", "SUM", disp=1)
_fop_case("fetch_and_op_replace", "REPLACE", disp=2)
_fop_case("fetch_and_op_no_op", "NO_OP", disp=4)
_fop_case("fetch_and_op_max", "MAX", disp=5)
_fop_case("fetch_and_op_array_array", "SUM", disp=6, kind="array")
_fop_case("fetch_and_op_buffer_specs", "SUM", disp=7, kind="spec")
_fop_case("fetch_and_op_int64", "SUM", disp=1, dtype="l")
_fop_case("fetch_and_op_double", "SUM", disp=2, dtype="d")


@case
def fetch_and_op_two_elements(Win, MPI, comm, np):
    """More than one element: ValueError."""
    return fence_op(Win, MPI, comm, np,
                    lambda w, peer, rank: w.Fetch_and_op(keep(np.ones(2, "i")), keep(np.zeros(2, "i")), peer, 0, MPI.SUM))


def _cas_case(name: str, hit: bool, kind: str = "numpy", disp: int = 2) -> None:
    def fn(Win, MPI, comm, np):
        def op(win, peer, rank):
            current = 100 * peer + disp
            values = ([77 + rank], [current if hit else -3], [0])
            if kind == "array":
                origin, compare, result = (array.array("i", v) for v in values)
            else:
                origin, compare, result = (np.array(v, "i") for v in values)
            keep((origin, compare, result))
            if kind == "spec":
                win.Compare_and_swap([origin, MPI.INT], [compare, MPI.INT], [result, 1, MPI.INT], peer, disp)
            else:
                win.Compare_and_swap(origin, compare, result, peer, disp)
            return result

        return fence_op(Win, MPI, comm, np, op)

    fn.__name__ = name
    case(fn)


_cas_case("compare_and_swap_hit", True)
_cas_case("compare_and_swap_miss", False, disp=3)
_cas_case("compare_and_swap_array_array", True, kind="array", disp=4)
_cas_case("compare_and_swap_buffer_specs", True, kind="spec", disp=5)


@case
def compare_and_swap_default_disp(Win, MPI, comm, np):
    def op(win, peer, rank):
        result = np.zeros(1, "i")
        win.Compare_and_swap(keep(np.array([9], "i")), keep(np.array([100 * peer], "i")), result, peer)
        return result

    return fence_op(Win, MPI, comm, np, op)


@case
def compare_and_swap_two_elements(Win, MPI, comm, np):
    return fence_op(Win, MPI, comm, np,
                    lambda w, peer, rank: w.Compare_and_swap(*keep((np.ones(2, "i"), np.ones(2, "i"), np.zeros(2, "i"))), peer))


# -- MPI.PROC_NULL targets: no-ops ---------------------------------------------------------------


def _proc_null_case(name: str, call: Callable[..., Any]) -> None:
    def fn(Win, MPI, comm, np):
        return fence_op(Win, MPI, comm, np, lambda w, peer, rank: call(w, MPI, np))

    fn.__name__ = name
    case(fn)


def _wait(req: Any) -> Any:
    return req.Wait()


def _filled(np: Any) -> Any:
    return np.full(2, -1, "i")


_proc_null_case("put_proc_null", lambda w, MPI, np: w.Put(np.ones(2, "i"), MPI.PROC_NULL))
_proc_null_case("put_none_proc_null", lambda w, MPI, np: w.Put(None, MPI.PROC_NULL))
_proc_null_case("get_proc_null_leaves_buffer", lambda w, MPI, np: (lambda b: (w.Get(b, MPI.PROC_NULL), b))(_filled(np)))
_proc_null_case("get_none_proc_null", lambda w, MPI, np: w.Get(None, MPI.PROC_NULL))
_proc_null_case("accumulate_proc_null", lambda w, MPI, np: w.Accumulate(np.ones(2, "i"), MPI.PROC_NULL, None, MPI.SUM))
_proc_null_case("accumulate_none_proc_null", lambda w, MPI, np: w.Accumulate(None, MPI.PROC_NULL))
_proc_null_case("get_accumulate_proc_null",
                lambda w, MPI, np: (lambda b: (w.Get_accumulate(np.ones(2, "i"), b, MPI.PROC_NULL), b))(_filled(np)))
_proc_null_case("get_accumulate_none_proc_null", lambda w, MPI, np: w.Get_accumulate(None, None, MPI.PROC_NULL))
# Fetch_and_op and Compare_and_swap to MPI.PROC_NULL are not compared: mpi4py
# passes NULL buffers for a PROC_NULL target and MPICH 4.0.2 rejects NULL
# buffers in these two calls ("Null pointer in parameter origin_addr") before
# looking at the rank, so the reference raises where MPI says no-op.
_proc_null_case("rput_none_proc_null", lambda w, MPI, np: _wait(w.Rput(None, MPI.PROC_NULL)))
_proc_null_case("rget_proc_null", lambda w, MPI, np: (lambda b: (_wait(w.Rget(b, MPI.PROC_NULL)), b))(_filled(np)))
_proc_null_case("raccumulate_none_proc_null", lambda w, MPI, np: _wait(w.Raccumulate(None, MPI.PROC_NULL)))
_proc_null_case("rget_accumulate_none_proc_null", lambda w, MPI, np: _wait(w.Rget_accumulate(None, None, MPI.PROC_NULL)))


@case
def lock_flush_unlock_proc_null(Win, MPI, comm, np):
    """Lock, Flush, Flush_local and Unlock accept MPI.PROC_NULL as a no-op."""
    with window(Win, MPI, comm, np) as (win, mem):
        r = attempt(lambda: (win.Lock(MPI.PROC_NULL), win.Flush(MPI.PROC_NULL), win.Flush_local(MPI.PROC_NULL),
                             win.Unlock(MPI.PROC_NULL)))
        comm.Barrier()
    return r


# -- request-based operations -------------------------------------------------------------------


@case
def rput_wait(Win, MPI, comm, np):
    def op(win, peer, rank):
        return win.Rput(np.array([1, 2], "i") + rank, peer, 1).Wait()

    return lock_op(Win, MPI, comm, np, op, lock="all")


@case
def rget_wait(Win, MPI, comm, np):
    def op(win, peer, rank):
        buf = np.full(3, -1, "i")
        done = win.Rget([buf, MPI.INT], peer, (2, 3, MPI.INT)).Wait()
        return (done, buf)

    return lock_op(Win, MPI, comm, np, op, lock="all")


@case
def raccumulate_wait(Win, MPI, comm, np):
    def op(win, peer, rank):
        return win.Raccumulate(np.array([10, 20], "i"), peer, (3,), MPI.SUM).Wait()

    return lock_op(Win, MPI, comm, np, op, lock="all")


@case
def rget_accumulate_wait(Win, MPI, comm, np):
    def op(win, peer, rank):
        result = np.full(2, -1, "i")
        done = win.Rget_accumulate(np.array([1, 1], "i"), result, peer, 4, MPI.SUM).Wait()
        return (done, result)

    return lock_op(Win, MPI, comm, np, op, lock="all")


@case
def request_waitall_mpi(Win, MPI, comm, np):
    """``MPI.Request.Waitall`` over the requests of R* calls."""
    def op(win, peer, rank):
        got = np.full(2, -1, "i")
        reqs = [win.Rput(keep(np.array([55, 66], "i")), peer, 6), win.Rget(got, peer, 0)]
        MPI.Request.Waitall(reqs)
        return got

    return lock_op(Win, MPI, comm, np, op, lock="all")


@case
def request_test_until_done(Win, MPI, comm, np):
    """``req.Test()`` returns a bool and becomes True (bounded loop)."""
    def op(win, peer, rank):
        req = win.Rput(np.array([3], "i"), peer, 7)
        deadline = time.monotonic() + SPIN_DEADLINE
        flag = req.Test()
        while not flag and time.monotonic() < deadline:
            flag = req.Test()
        return (type(flag).__name__, flag)

    return lock_op(Win, MPI, comm, np, op, lock="all")
