"""Cases for the rest of MPI's RMA (issue 29): MAXLOC and MINLOC on MPI's pair
types, REPLACE and NO_OP on pairs, the origins MPI programs give NO_OP,
MPICH's which_accumulate_ops hint, structs that mix basic types in Put and
Get, and one access across two adjacent regions of a dynamic window."""

from __future__ import annotations

from typing import Any, Callable

from ._support import attempt, attempt_raw, case, fence_op, keep, norm, peer_of

PAIRS = ("SHORT_INT", "TWOINT", "LONG_INT", "FLOAT_INT", "DOUBLE_INT", "LONG_DOUBLE_INT")

# Four pairs per rank: equal values with the origin's index smaller, equal
# values with the origin's index larger, and each value order once.
TARGET = [(5, 10), (5, 10), (1, 3), (9, 7)]


def _origin(rank: int) -> list[tuple[int, int]]:
    return [(5, 4 + rank), (5, 12), (3, 1), (2, 0)]


def _pairs(values: Any) -> list[tuple[float, int]]:
    # float(): a long double pair's value as a Python float (tolist leaves it
    # a numpy scalar).
    return [(float(v), int(k)) for v, k in values.tolist()]


def _pair_window(Win: Any, MPI: Any, comm: Any, np: Any, type_name: str,
                 op: Callable[[Any, Any, int, Any, Any], Any]) -> Any:
    """A Create window of the TARGET pairs of MPI.<type_name> on every rank;
    op(win, T, peer, rank, dt) runs in a fence epoch. Returns (op's result,
    the local pairs afterwards)."""
    from mpi4py.util import dtlib

    T = getattr(MPI, type_name)
    dt = dtlib.to_numpy_dtype(T)
    rank, peer = peer_of(comm)
    mem = np.array(TARGET, dt)
    win = Win.Create(mem, dt.itemsize, MPI.INFO_NULL, comm)
    try:
        win.Fence()
        result = attempt_raw(op, win, T, peer, rank, dt)
        win.Fence()
        return norm(result), _pairs(mem)
    finally:
        win.Free()


def _loc_case(type_name: str, op_name: str) -> None:
    def fn(Win, MPI, comm, np):
        def op(win, T, peer, rank, dt):
            origin = keep(np.array(_origin(rank), dt))
            win.Accumulate([origin, 4, T], peer, (0, 4, T), getattr(MPI, op_name))

        return _pair_window(Win, MPI, comm, np, type_name, op)

    fn.__name__ = f"accumulate_{op_name.lower()}_{type_name.lower()}"
    case(fn)


for _type in PAIRS:
    for _op in ("MAXLOC", "MINLOC"):
        _loc_case(_type, _op)


@case
def get_accumulate_minloc_double_int(Win, MPI, comm, np):
    """The old pairs come back; the target keeps the smaller value, the
    smaller index on a tie."""
    def op(win, T, peer, rank, dt):
        origin, result = keep(np.array(_origin(rank), dt)), keep(np.zeros(4, dt))
        win.Get_accumulate([origin, 4, T], [result, 4, T], peer, (0, 4, T), MPI.MINLOC)
        return result

    return _pair_window(Win, MPI, comm, np, "DOUBLE_INT", op)


@case
def fetch_and_op_maxloc_twoint(Win, MPI, comm, np):
    def op(win, T, peer, rank, dt):
        origin, result = keep(np.array([(9, 2)], dt)), keep(np.zeros(1, dt))
        win.Fetch_and_op([origin, 1, T], [result, 1, T], peer, 3, MPI.MAXLOC)
        return result  # read after the epoch (_pair_window's Fence): valid only then

    return _pair_window(Win, MPI, comm, np, "TWOINT", op)


@case
def pair_replace_then_no_op_double_int(Win, MPI, comm, np):
    """REPLACE writes whole pairs, NO_OP reads them (in separate epochs: the
    same bytes)."""
    def op(win, T, peer, rank, dt):
        origin, result = keep(np.array([(-1.5, 40 + rank), (2.5, 50)], dt)), keep(np.zeros(2, dt))
        win.Accumulate([origin, 2, T], peer, (1, 2, T), MPI.REPLACE)
        win.Fence()
        win.Get_accumulate([origin, 2, T], [result, 2, T], peer, (1, 2, T), MPI.NO_OP)
        return result

    return _pair_window(Win, MPI, comm, np, "DOUBLE_INT", op)


# -- NO_OP: the origin is ignored --------------------------------------------------------------


def _no_op_origin_case(name: str, make_origin: Callable[[Any, Any, int], Any]) -> None:
    def fn(Win, MPI, comm, np):
        def op(win, peer, rank):
            result = keep(np.full(2, -1, "i"))
            win.Get_accumulate(make_origin(MPI, np, rank), [result, 2, MPI.INT], peer, (3, 2, MPI.INT), MPI.NO_OP)
            return result

        return fence_op(Win, MPI, comm, np, op)

    fn.__name__ = name
    case(fn)


_no_op_origin_case("get_accumulate_no_op_origin_none_count_0", lambda MPI, np, r: [None, 0, MPI.INT])
_no_op_origin_case("get_accumulate_no_op_origin_datatype_null", lambda MPI, np, r: [None, 0, MPI.DATATYPE_NULL])
_no_op_origin_case("get_accumulate_no_op_origin_buf_count_0",
                   lambda MPI, np, r: [keep(np.zeros(5, "i")), 0, MPI.INT])


# -- MPICH's which_accumulate_ops hint --------------------------------------------------------


@case
def which_accumulate_ops_sum_no_op(Win, MPI, comm, np):
    """MPICH's own hint in MPICH's grammar: the window is created and the
    ops it names work."""
    rank, peer = peer_of(comm)
    info = MPI.Info.Create()
    info.Set("which_accumulate_ops", "sum,no_op")
    mem = np.zeros(2, "q")
    try:
        win = Win.Create(mem, 8, info, comm)
    finally:
        info.Free()
    try:
        old, now = np.zeros(1, "q"), np.zeros(1, "q")
        win.Lock(peer)
        r = attempt(lambda: (win.Fetch_and_op(np.array([3 + rank], "q"), old, peer, 0, MPI.SUM), win.Flush(peer),
                             win.Fetch_and_op(np.zeros(1, "q"), now, peer, 0, MPI.NO_OP)))
        win.Unlock(peer)
        comm.Barrier()
        return r, old.tolist(), now.tolist(), mem.tolist()
    finally:
        win.Free()


# -- a struct that mixes basic types, in Put and Get --------------------------------------------------


def _struct(MPI: Any) -> Any:
    # An address, an int and four chars, as MPI programs describe a record.
    return MPI.Datatype.Create_struct([1, 1, 4], [0, 8, 12], [MPI.AINT, MPI.INT, MPI.CHAR]).Commit()


def _struct_case(name: str, get: bool) -> None:
    def fn(Win, MPI, comm, np):
        T = _struct(MPI)
        try:
            def op(win, peer, rank):
                buf = keep(bytearray(bytes(range(50 + rank, 82 + rank))))
                if get:
                    win.Get([buf, 1, T], peer, (8, 1, T))
                else:
                    win.Put([buf, 1, T], peer, (8, 1, T))
                return buf

            return fence_op(Win, MPI, comm, np, op, n=32, dtype="B")
        finally:
            T.Free()

    fn.__name__ = name
    case(fn)


_struct_case("put_struct_mixed_types", get=False)
_struct_case("get_struct_mixed_types", get=True)


# (An accumulate-style call on such a struct is erroneous in MPI: MPICH 4.0.2
# aborts the job on it, so onesided's refusal is tested in tests/test_pairs.py.)


# -- dynamic windows: one access across two adjacent attached regions -------------------------------------


@case
def dynamic_put_across_adjacent_regions(Win, MPI, comm, np):
    """Two halves of one array attached as two regions; one Put covers the
    end of the first and the start of the second. MPI 4.1 section 12.2.4
    makes only an access to memory that is not attached erroneous."""
    rank, peer = peer_of(comm)
    win = Win.Create_dynamic(MPI.INFO_NULL, comm)
    try:
        buf = np.full(8, -1, "i")
        win.Attach(buf[:4])
        win.Attach(buf[4:])
        addresses = comm.allgather(MPI.Get_address(buf))
        win.Lock_all()
        origin = keep(np.array([70, 71, 72, 73], "i") + rank)
        r = attempt(lambda: (win.Put(origin, peer, addresses[peer] + 8), win.Flush(peer)))
        win.Unlock_all()
        comm.Barrier()
        values = buf.tolist()
        win.Detach(buf[4:])
        win.Detach(buf[:4])
        return r, values
    finally:
        win.Free()
