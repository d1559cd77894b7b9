"""The registry of cases (CASES, case) and the helpers the case modules share: results, windows."""

from __future__ import annotations

import array
from contextlib import contextmanager
from typing import Any, Callable, Iterator

CASES: dict[str, Callable[..., Any]] = {}

SPIN_DEADLINE = 10.0
"""Seconds a util.sync spin-wait may last before it raises TimeoutError."""


def case(fn: Callable[..., Any]) -> Callable[..., Any]:
    assert fn.__name__ not in CASES, fn.__name__
    CASES[fn.__name__] = fn
    return fn


# -- results -------------------------------------------------------------------


def _builtin_class(exc_type: type) -> type:
    for cls in exc_type.__mro__:
        if cls.__module__ == "builtins":
            return cls
    return BaseException


class Raised:
    """An exception, reduced to what the suite compares.

    * ``mpi``: it is an ``mpi4py.MPI.Exception`` (an error MPI reported);
    * ``onesided``: it is an ``onesided.Error``;
    * ``builtin``: the first builtin class in its MRO (ValueError, TypeError,
      IndexError, RuntimeError, BufferError, AttributeError, ...).

    Two results match (:func:`match`) when the mpi4py one is an
    ``MPI.Exception`` and the onesided one an ``onesided.Error`` (any
    subclass), or else when their builtin classes are the same.
    """

    def __init__(self, qualname: str, builtin: str, mpi: bool, onesided: bool, message: str) -> None:
        self.qualname = qualname
        self.builtin = builtin
        self.mpi = mpi
        self.onesided = onesided
        self.message = message

    @classmethod
    def of(cls, exc: BaseException) -> "Raised":
        mro = type(exc).__mro__
        mpi = any(c.__module__ == "mpi4py.MPI" and c.__name__ == "Exception" for c in mro)
        ours = any(c.__module__.split(".")[0] == "onesided" and c.__name__ == "Error" for c in mro)
        t = type(exc)
        qualname = t.__name__ if t.__module__ == "builtins" else f"{t.__module__.split('.')[0]}.{t.__name__}"
        if mpi:
            qualname = "MPI.Exception"
        text = " ".join(str(exc).split())
        if len(text) > 90:
            text = text[:87] + "..."
        return cls(qualname, _builtin_class(t).__name__, mpi, ours, text)

    def __repr__(self) -> str:
        kind = self.qualname if self.qualname == self.builtin else f"{self.qualname}<{self.builtin}>"
        return f"raise {kind}({self.message!r})"


def match(mpi: Any, ours: Any) -> bool:
    """Whether the onesided result is the same as the mpi4py one (see Raised)."""
    if isinstance(mpi, Raised) or isinstance(ours, Raised):
        if not (isinstance(mpi, Raised) and isinstance(ours, Raised)):
            return False
        if mpi.mpi:
            return ours.onesided
        return mpi.builtin == ours.builtin
    if isinstance(mpi, (list, tuple)) and isinstance(ours, (list, tuple)):
        return type(mpi) is type(ours) and len(mpi) == len(ours) and all(map(match, mpi, ours))
    if isinstance(mpi, dict) and isinstance(ours, dict):
        return mpi.keys() == ours.keys() and all(match(mpi[k], ours[k]) for k in mpi)
    return type(mpi) is type(ours) and mpi == ours


def norm(value: Any) -> Any:
    """A picklable, printable, comparable form of a case's result."""
    if value is None or isinstance(value, (bool, str, bytes, Raised)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, (list, tuple)):
        return type(value)(norm(v) for v in value)
    if isinstance(value, dict):
        return {str(k): norm(v) for k, v in value.items()}
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, array.array):
        return value.tolist()
    tolist = getattr(value, "tolist", None)  # numpy arrays and scalars
    if callable(tolist) and type(value).__module__ == "numpy":
        return norm(tolist())
    return f"<{type(value).__name__}>"


def attempt(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """fn's normalised result, or the exception it raised as a Raised."""
    return norm(attempt_raw(fn, *args, **kwargs))


def attempt_raw(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """fn's result as it is (a buffer an RMA call writes is read after the
    epoch closes), or the exception it raised as a Raised."""
    try:
        return fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - every exception is a result here
        return Raised.of(e)


KEEP: list[Any] = []
"""Buffers given to RMA calls, alive until the case is over: MPI may read or
write them until the epoch closes (mpi4py keeps no reference to them). The
runner empties it after each case."""


def keep(obj: Any) -> Any:
    KEEP.append(obj)
    return obj


# -- windows -------------------------------------------------------------------

N = 8  # elements per rank in the test windows


def peer_of(comm: Any) -> tuple[int, int]:
    rank = comm.Get_rank()
    return rank, 1 - rank


def initial(np: Any, rank: int, n: int = N, dtype: str = "i") -> Any:
    """The values a rank's window starts with: 100*rank + index."""
    return (np.arange(n) + 100 * rank).astype(dtype)


@contextmanager
def window(Win: Any, MPI: Any, comm: Any, np: Any, kind: str = "Create", n: int = N,
           dtype: str = "i") -> Iterator[tuple[Any, Any]]:
    """A window of n elements of dtype on every rank over comm, holding
    initial(rank), and a numpy view of the local memory. Created with
    mpi4py's positional arguments (memory/size, disp_unit, info, comm).
    Freed on the way out: unguarded on a normal exit (a failing Free is the
    case's result), guarded after an exception."""
    rank = comm.Get_rank()
    itemsize = np.dtype(dtype).itemsize
    if kind == "Create":
        mem = np.zeros(n, dtype)
        win = Win.Create(mem, itemsize, MPI.INFO_NULL, comm)
    elif kind == "Allocate":
        win = Win.Allocate(n * itemsize, itemsize, MPI.INFO_NULL, comm)
        mem = np.frombuffer(win, dtype)
    else:
        raise ValueError(kind)
    mem[:] = initial(np, rank, n, dtype)
    try:
        yield win, mem
    except BaseException:
        try:
            win.Free()
        except Exception:  # noqa: BLE001
            pass
        raise
    win.Free()


def local_after_barrier(win: Any, MPI: Any, comm: Any, mem: Any) -> list[Any]:
    """The local window contents once every rank's passive-target epoch has
    ended (barrier, then a shared lock on the own window for the load)."""
    rank = comm.Get_rank()
    comm.Barrier()
    win.Lock(rank, MPI.LOCK_SHARED)
    values = mem.tolist()
    win.Unlock(rank)
    comm.Barrier()
    return values


def fence_op(Win: Any, MPI: Any, comm: Any, np: Any, op: Callable[..., Any], kind: str = "Create",
             n: int = N, dtype: str = "i") -> tuple[Any, list[Any]]:
    """Run op(win, peer, rank) on every rank inside a fence epoch; return
    (op's result or Raised, the local window contents after the epoch)."""
    rank, peer = peer_of(comm)
    with window(Win, MPI, comm, np, kind, n, dtype) as (win, mem):
        win.Fence()
        result = attempt_raw(op, win, peer, rank)
        win.Fence()
        local = mem.tolist()
    return norm(result), local


def lock_op(Win: Any, MPI: Any, comm: Any, np: Any, op: Callable[..., Any], lock: str = "exclusive",
            kind: str = "Create", n: int = N, dtype: str = "i") -> tuple[Any, Any, list[Any]]:
    """Run op(win, peer, rank) on every rank inside a passive-target epoch on
    the peer (Lock exclusive/shared, or Lock_all); return (op's result,
    the closing call's result, the local contents afterwards)."""
    rank, peer = peer_of(comm)
    with window(Win, MPI, comm, np, kind, n, dtype) as (win, mem):
        comm.Barrier()
        if lock == "all":
            win.Lock_all()
        else:
            win.Lock(peer, MPI.LOCK_EXCLUSIVE if lock == "exclusive" else MPI.LOCK_SHARED)
        result = attempt_raw(op, win, peer, rank)
        closed = attempt(win.Unlock_all) if lock == "all" else attempt(win.Unlock, peer)
        local = local_after_barrier(win, MPI, comm, mem)
    return norm(result), closed, local


def gathered_sorted(comm: Any, values: list[Any]) -> list[Any]:
    return sorted(v for part in comm.allgather([norm(v) for v in values]) for v in part)


def _with_flavor(Win: Any, MPI: Any, comm: Any, np: Any, flavor: str, fn: Callable[[Any], Any]) -> Any:
    keep = np.zeros(4, "i")
    if flavor == "create":
        win = Win.Create(keep, 4, MPI.INFO_NULL, comm)
    elif flavor == "allocate":
        win = Win.Allocate(16, 4, MPI.INFO_NULL, comm)
    elif flavor == "shared":
        win = Win.Allocate_shared(16, 4, MPI.INFO_NULL, comm)
    else:
        win = Win.Create_dynamic(MPI.INFO_NULL, comm)
    try:
        return attempt(fn, win)
    finally:
        win.Free()
