"""Cases for the MPI.Win surface: members, constructors, attributes, group, info, name, memory, lifetime."""

from __future__ import annotations

import array
import pickle
from typing import Any, Callable

from ._support import Raised, _with_flavor, attempt, case, gathered_sorted


# -- the MPI.Win surface ---------------------------------------------------------

# Every member of mpi4py 4.x's MPI.Win (src/mpi4py/MPI.pyi, class Win), except
# the dunders every Python class has (__eq__, __ne__, __reduce__, __new__) and
# __buffer__ (Python >= 3.12 only); behaviour cases below cover those.
WIN_MEMBERS = [
    "fromhandle", "free",
    "Create", "Allocate", "Allocate_shared", "Shared_query", "Create_dynamic", "Attach", "Detach", "Free",
    "Set_info", "Get_info", "Get_group", "Get_attr", "Set_attr", "Delete_attr", "Create_keyval",
    "Free_keyval", "tomemory",
    "Put", "Get", "Accumulate", "Get_accumulate", "Fetch_and_op", "Compare_and_swap",
    "Rput", "Rget", "Raccumulate", "Rget_accumulate",
    "Fence", "Start", "Complete", "Post", "Wait", "Test",
    "Lock", "Unlock", "Lock_all", "Unlock_all", "Flush", "Flush_all", "Flush_local", "Flush_local_all", "Sync",
    "Create_errhandler", "Get_errhandler", "Set_errhandler", "Call_errhandler",
    "Get_name", "Set_name", "toint", "fromint", "py2f", "f2py",
    "handle", "info", "group", "group_size", "group_rank", "attrs", "flavor", "model", "name",
]


def _member_case(member: str) -> Callable[..., Any]:
    def fn(Win: Any, MPI: Any, comm: Any, np: Any) -> bool:
        return hasattr(Win, member)

    fn.__name__ = f"member_{member}"
    return fn


for _m in WIN_MEMBERS:
    case(_member_case(_m))


@case
def members_all_public(Win, MPI, comm, np):
    """Every public name of the running mpi4py's MPI.Win (not only the list
    above): the ones Win lacks."""
    return sorted(name for name in dir(MPI.Win) if not name.startswith("_") and not hasattr(Win, name))


# -- constructors ------------------------------------------------------------------


def _shape_freed(win):
    """The window's shape (_shape), then Free: a constructor case in one line."""
    try:
        return _shape(win)
    finally:
        win.Free()


def _shape(win: Any) -> tuple[Any, ...]:
    return (win.group_size, win.group_rank, win.attrs[1], win.attrs[2])


@case
def create_defaults(Win, MPI, comm, np):
    """Create(memory) alone: disp_unit=1, INFO_NULL, COMM_SELF (a group of one)."""
    mem = np.zeros(4, "i")
    return _shape_freed(Win.Create(mem))


@case
def create_positional(Win, MPI, comm, np):
    mem = np.zeros(4, "i")
    return _shape_freed(Win.Create(mem, 4, MPI.INFO_NULL, comm))


@case
def create_keywords(Win, MPI, comm, np):
    mem = np.zeros(4, "d")
    return _shape_freed(Win.Create(mem, disp_unit=8, info=MPI.INFO_NULL, comm=comm))


@case
def create_bytearray(Win, MPI, comm, np):
    return _shape_freed(Win.Create(bytearray(12), 1, MPI.INFO_NULL, comm))


@case
def create_array_array(Win, MPI, comm, np):
    return _shape_freed(Win.Create(array.array("d", [0.0] * 3), 8, MPI.INFO_NULL, comm))


@case
def create_bottom(Win, MPI, comm, np):
    """Create(MPI.BOTTOM): a window with no memory (base 0, size 0)."""
    win = Win.Create(MPI.BOTTOM, 1, MPI.INFO_NULL, comm)
    try:
        return (win.attrs, _shape(win))
    finally:
        win.Free()


@case
def create_none(Win, MPI, comm, np):
    """Create(None): as MPI.BOTTOM."""
    win = Win.Create(None, 1, MPI.INFO_NULL, comm)
    try:
        return (win.attrs, _shape(win))
    finally:
        win.Free()


@case
def create_readonly_memory(Win, MPI, comm, np):
    """Read-only memory is refused before any communication (BufferError)."""
    return attempt(Win.Create, b"\0" * 8, 1, MPI.INFO_NULL, comm)


@case
def allocate_defaults(Win, MPI, comm, np):
    return _shape_freed(Win.Allocate(16))


@case
def allocate_positional(Win, MPI, comm, np):
    return _shape_freed(Win.Allocate(32, 4, MPI.INFO_NULL, comm))


@case
def allocate_keywords(Win, MPI, comm, np):
    return _shape_freed(Win.Allocate(size=24, disp_unit=8, info=MPI.INFO_NULL, comm=comm))


@case
def allocate_zero_on_one_rank(Win, MPI, comm, np):
    """Rank 0 holds one int, rank 1 none (util.sync's Counter layout); both
    fetch-and-add on rank 0's int under a shared lock: unique tickets."""
    rank = comm.Get_rank()
    win = Win.Allocate(4 if rank == 0 else 0, 4, MPI.INFO_NULL, comm)
    try:
        size = win.attrs[1]
        one, ticket = np.ones(1, "i"), np.zeros(1, "i")
        win.Lock(0, MPI.LOCK_SHARED)
        r = attempt(win.Fetch_and_op, one, ticket, 0)
        win.Unlock(0)
        return (size, r, gathered_sorted(comm, [ticket[0]]))
    finally:
        win.Free()


@case
def allocate_negative_size(Win, MPI, comm, np):
    return attempt(Win.Allocate, -1, 1, MPI.INFO_NULL, comm)


@case
def allocate_shared_defaults(Win, MPI, comm, np):
    return _shape_freed(Win.Allocate_shared(16))


@case
def allocate_shared_positional(Win, MPI, comm, np):
    return _shape_freed(Win.Allocate_shared(32, 4, MPI.INFO_NULL, comm))


@case
def create_dynamic_defaults(Win, MPI, comm, np):
    win = Win.Create_dynamic()
    try:
        return (win.attrs, win.group_size, win.group_rank)
    finally:
        win.Free()


@case
def create_dynamic_positional(Win, MPI, comm, np):
    win = Win.Create_dynamic(MPI.INFO_NULL, comm)
    try:
        return (win.attrs, win.group_size, win.group_rank)
    finally:
        win.Free()


# -- flavor, model, attributes ---------------------------------------------------------


for _flavor in ("create", "allocate", "shared", "dynamic"):
    def _flavor_case(Win, MPI, comm, np, _f=_flavor):
        want = getattr(MPI, f"WIN_FLAVOR_{_f.upper()}")
        return _with_flavor(Win, MPI, comm, np, _f, lambda w: w.flavor == want)

    _flavor_case.__name__ = f"flavor_{_flavor}"
    case(_flavor_case)

    def _attr_flavor_case(Win, MPI, comm, np, _f=_flavor):
        want = getattr(MPI, f"WIN_FLAVOR_{_f.upper()}")
        return _with_flavor(Win, MPI, comm, np, _f, lambda w: w.Get_attr(MPI.WIN_CREATE_FLAVOR) == want)

    _attr_flavor_case.__name__ = f"get_attr_create_flavor_{_flavor}"
    case(_attr_flavor_case)


@case
def model_unified(Win, MPI, comm, np):
    return _with_flavor(Win, MPI, comm, np, "allocate", lambda w: w.model == MPI.WIN_UNIFIED)


@case
def get_attr_model(Win, MPI, comm, np):
    return _with_flavor(Win, MPI, comm, np, "allocate", lambda w: w.Get_attr(MPI.WIN_MODEL) == MPI.WIN_UNIFIED)


def _address(np: Any, buf: Any) -> int:
    return int(np.frombuffer(buf, "B").ctypes.data)


@case
def get_attr_base(Win, MPI, comm, np):
    return _with_flavor(Win, MPI, comm, np, "allocate",
                        lambda w: w.Get_attr(MPI.WIN_BASE) == _address(np, w))


@case
def get_attr_size(Win, MPI, comm, np):
    return _with_flavor(Win, MPI, comm, np, "allocate", lambda w: w.Get_attr(MPI.WIN_SIZE))


@case
def get_attr_disp_unit(Win, MPI, comm, np):
    return _with_flavor(Win, MPI, comm, np, "allocate", lambda w: w.Get_attr(MPI.WIN_DISP_UNIT))


@case
def attrs_tuple(Win, MPI, comm, np):
    return _with_flavor(Win, MPI, comm, np, "create",
                        lambda w: (w.attrs[0] == _address(np, w), w.attrs[1], w.attrs[2]))


@case
def user_keyval_attr(Win, MPI, comm, np):
    """Create_keyval / Set_attr / Get_attr / Delete_attr / Free_keyval."""
    def body(w):
        key = Win.Create_keyval()
        w.Set_attr(key, "payload")
        got = w.Get_attr(key)
        w.Delete_attr(key)
        gone = w.Get_attr(key)
        freed = Win.Free_keyval(key)
        return (got, gone, freed == MPI.KEYVAL_INVALID)

    return _with_flavor(Win, MPI, comm, np, "allocate", body)


# -- group -------------------------------------------------------------------------


@case
def get_group_size_rank(Win, MPI, comm, np):
    def body(w):
        g = w.Get_group()
        try:
            return (g.Get_size(), g.Get_rank())
        finally:
            g.Free()

    return _with_flavor(Win, MPI, comm, np, "allocate", body)


@case
def get_group_is_mpi_group(Win, MPI, comm, np):
    def body(w):
        g = w.Get_group()
        try:
            return isinstance(g, MPI.Group)
        finally:
            g.Free()

    return _with_flavor(Win, MPI, comm, np, "allocate", body)


@case
def get_group_ident_to_comm_group(Win, MPI, comm, np):
    def body(w):
        g, cg = w.Get_group(), comm.Get_group()
        try:
            return MPI.Group.Compare(g, cg) == MPI.IDENT
        finally:
            g.Free()
            cg.Free()

    return _with_flavor(Win, MPI, comm, np, "allocate", body)


@case
def group_property(Win, MPI, comm, np):
    return _with_flavor(Win, MPI, comm, np, "allocate", lambda w: (w.group.Get_size(), w.group.Get_rank()))


@case
def group_size_rank_properties(Win, MPI, comm, np):
    return _with_flavor(Win, MPI, comm, np, "allocate", lambda w: (w.group_size, w.group_rank))


# -- info --------------------------------------------------------------------------


@case
def get_info_is_mpi_info(Win, MPI, comm, np):
    return _with_flavor(Win, MPI, comm, np, "allocate", lambda w: isinstance(w.Get_info(), MPI.Info))


@case
def info_property_is_mpi_info(Win, MPI, comm, np):
    return _with_flavor(Win, MPI, comm, np, "allocate", lambda w: isinstance(w.info, MPI.Info))


@case
def get_info_get_key_and_free(Win, MPI, comm, np):
    """The standard hint accumulate_ordering reads back as its default; the
    returned Info is the caller's to free."""
    def body(w):
        info = w.Get_info()
        value = info.Get("accumulate_ordering")
        info.Free()
        return value

    return _with_flavor(Win, MPI, comm, np, "allocate", body)


@case
def set_info_empty(Win, MPI, comm, np):
    return _with_flavor(Win, MPI, comm, np, "allocate", lambda w: w.Set_info(MPI.Info.Create()))


@case
def info_property_setter(Win, MPI, comm, np):
    return _with_flavor(Win, MPI, comm, np, "allocate", lambda w: setattr(w, "info", MPI.Info.Create()))


@case
def info_standard_hints_at_creation(Win, MPI, comm, np):
    """MPI's standard window hints in an MPI.Info are accepted."""
    info = MPI.Info.Create()
    for key, value in [("no_locks", "false"), ("accumulate_ordering", "rar,raw,war,waw"),
                       ("accumulate_ops", "same_op_no_op"), ("same_size", "true"), ("same_disp_unit", "true")]:
        info.Set(key, value)
    try:
        win = Win.Allocate(16, 4, info, comm)
        win.Free()
        return True
    finally:
        info.Free()


@case
def info_unknown_key_ignored(Win, MPI, comm, np):
    """MPI ignores hints it does not know."""
    info = MPI.Info.Create()
    info.Set("conformance_unknown_hint", "1")
    try:
        win = Win.Allocate(16, 4, info, comm)
        win.Free()
        return True
    finally:
        info.Free()


# -- name ----------------------------------------------------------------------------


@case
def name_default(Win, MPI, comm, np):
    return _with_flavor(Win, MPI, comm, np, "allocate", lambda w: (w.Get_name(), w.name))


@case
def set_name(Win, MPI, comm, np):
    def body(w):
        w.Set_name("conformance")
        return (w.Get_name(), w.name)

    return _with_flavor(Win, MPI, comm, np, "allocate", body)


@case
def name_property_setter(Win, MPI, comm, np):
    def body(w):
        w.name = "by-property"
        return w.Get_name()

    return _with_flavor(Win, MPI, comm, np, "allocate", body)


# -- error handlers ----------------------------------------------------------------------


@case
def set_errhandler_errors_return(Win, MPI, comm, np):
    """The common set-up line ``win.Set_errhandler(MPI.ERRORS_RETURN)``."""
    return _with_flavor(Win, MPI, comm, np, "allocate", lambda w: w.Set_errhandler(MPI.ERRORS_RETURN))


# -- memory: tomemory and the buffer interface ---------------------------------------------


@case
def tomemory_len(Win, MPI, comm, np):
    return _with_flavor(Win, MPI, comm, np, "allocate", lambda w: len(w.tomemory()))


@case
def tomemory_fill_zero(Win, MPI, comm, np):
    """``m = win.tomemory(); m[:] = 0`` zeroes the window (as MPI.buffer)."""
    def body(w):
        m = w.tomemory()
        np.frombuffer(w, "i")[:] = 7
        m[:] = 0
        return np.frombuffer(w, "i").tolist()

    return _with_flavor(Win, MPI, comm, np, "allocate", body)


@case
def tomemory_slice_assign_bytes(Win, MPI, comm, np):
    def body(w):
        m = w.tomemory()
        m[0:4] = b"\x01\x02\x03\x04"
        return bytes(m[0:6])

    return _with_flavor(Win, MPI, comm, np, "allocate", body)


@case
def tomemory_numpy_view(Win, MPI, comm, np):
    def body(w):
        a = np.frombuffer(w.tomemory(), "i")
        a[:] = [5, 6, 7, 8]
        return np.frombuffer(w, "i").tolist()

    return _with_flavor(Win, MPI, comm, np, "allocate", body)


@case
def tomemory_buffer_attributes(Win, MPI, comm, np):
    """MPI.buffer's address/nbytes/readonly."""
    def body(w):
        m = w.tomemory()
        return (m.address == w.attrs[0], m.nbytes, m.readonly)

    return _with_flavor(Win, MPI, comm, np, "allocate", body)


@case
def memoryview_of_window_cast(Win, MPI, comm, np):
    """``memoryview(win).cast('i')`` (what util.sync's spin loops read)."""
    def body(w):
        v = memoryview(w).cast("i")
        v[1] = 42
        return (len(v), v[1], np.frombuffer(w, "i")[1])

    return _with_flavor(Win, MPI, comm, np, "allocate", body)


# -- lifetime: free, Free, bool, pickle ------------------------------------------------------


@case
def bool_of_live_window(Win, MPI, comm, np):
    return _with_flavor(Win, MPI, comm, np, "allocate", bool)


@case
def equality(Win, MPI, comm, np):
    return _with_flavor(Win, MPI, comm, np, "allocate", lambda w: (w == w, w != w))


@case
def Free_then_bool(Win, MPI, comm, np):
    win = Win.Allocate(16, 4, MPI.INFO_NULL, comm)
    win.Free()
    return bool(win)


@case
def Free_twice(Win, MPI, comm, np):
    win = Win.Allocate(16, 4, MPI.INFO_NULL, comm)
    win.Free()
    return attempt(win.Free)


@case
def put_after_Free(Win, MPI, comm, np):
    win = Win.Allocate(16, 4, MPI.INFO_NULL, comm)
    win.Free()
    return attempt(win.Put, np.ones(1, "i"), 0)


@case
def free_lowercase(Win, MPI, comm, np):
    """mpi4py 4's ``free()`` (what util.sync calls): frees, then bool is False."""
    win = Win.Allocate(16, 4, MPI.INFO_NULL, comm)
    r = attempt(win.free)
    if isinstance(r, Raised):
        win.Free()
        return r
    return (r, bool(win))


@case
def free_lowercase_twice(Win, MPI, comm, np):
    """A second ``free()`` does nothing."""
    win = Win.Allocate(16, 4, MPI.INFO_NULL, comm)
    r = attempt(win.free)
    if isinstance(r, Raised):
        win.Free()
        return r
    return attempt(win.free)


@case
def null_window_constructor(Win, MPI, comm, np):
    """``Win()`` is a null window (MPI.WIN_NULL), false in a boolean context."""
    return attempt(lambda: bool(Win()))


@case
def pickle_window(Win, MPI, comm, np):
    """Windows cannot be pickled: ValueError."""
    return _with_flavor(Win, MPI, comm, np, "allocate", lambda w: pickle.dumps(w))
