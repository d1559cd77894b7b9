"""The RMA window, with mpi4py's ``MPI.Win`` names and argument conventions.

Porting mpi4py code means changing the line that creates the window::

    win = MPI.Win.Allocate(nbytes, disp_unit=8, comm=comm)        # mpi4py
    win = onesided.Window.Allocate(nbytes, disp_unit=8, comm=comm)  # onesided

Guarantees (the same for every window):

* **Completion.** Put, Get, Accumulate, Get_accumulate, Fetch_and_op,
  Compare_and_swap, Rmw and Rmw2 are non-blocking. They complete, at the
  origin and at the target, at the next ``Flush``/``Flush_all``,
  ``Unlock``/``Unlock_all``, ``Fence`` or ``Complete`` that covers their
  target (the R* forms also at their Request's Wait); results are valid only
  then. onesided keeps the buffers you pass alive until that point.
* **Atomicity.** Every accumulate-style call (Accumulate, Get_accumulate,
  Fetch_and_op, Compare_and_swap) is atomic per element with respect to every
  other accumulate-style call on the same window, from any origin, whatever
  the ops.
* **Ordering.** Accumulate-style calls of one dtype from one thread of an
  origin to overlapping target memory take effect in program order for the
  pairs ``accumulate_ordering`` requires (default ``rar,raw,war,waw``).
  Calls from concurrent threads are unordered. Put and Get are unordered,
  and not atomic. Nasty mode (info ``onesided_nasty`` or ``ONESIDED_NASTY``)
  delays and reorders everything else, to expose code relying on more.
* **Safety.** A target range outside the target's window is rejected at the
  origin (:class:`BoundsError`) before anything is sent; operations outside an
  access epoch raise :class:`EpochError`.
* **Progress.** A background thread progresses passive-target operations, so
  they complete while the target computes, sleeps or holds the GIL. Blocking
  calls release the GIL; several threads may use one window.
* **PROC_NULL.** A ``PROC_NULL`` target (onesided's or mpi4py's) makes every
  data call, Lock, Unlock, Flush and Flush_local a no-op; its buffers may be
  None and an R* call's request is complete at once.
* **Lifetime.** A window over an mpi4py communicator keeps its own duplicate
  of it (freed by Free), so the caller may free the communicator at once.

The whole ``MPI.Win`` surface is here (docs/porting.md has the table): what
only makes sense inside an MPI library (error handlers, handle conversions)
is accepted as a documented no-op or raises NotImplementedError.
"""

from __future__ import annotations

import ctypes
import itertools
import sys
from contextlib import contextmanager
from functools import partial
from typing import Any, Callable, Iterator

from . import _core, _mpi_args as mpi_args, _operations as operations
from ._atomics_report import AtomicsReport
from ._errors import ArgumentError, EpochError
from ._mpi_args import Get_address
from ._mpi_objects import Group, Info, buffer
from ._request import Request
from ._types import OPS, RMW2_OPS, RMW_OPS

SUM = OPS["sum"]

LOCK_EXCLUSIVE: int = _core.LOCK_EXCLUSIVE
LOCK_SHARED: int = _core.LOCK_SHARED
MODE_NOCHECK: int = _core.MODE_NOCHECK
MODE_NOSTORE: int = _core.MODE_NOSTORE
MODE_NOPUT: int = _core.MODE_NOPUT
MODE_NOPRECEDE: int = _core.MODE_NOPRECEDE
MODE_NOSUCCEED: int = _core.MODE_NOSUCCEED
MODE_PASSIVE_EPOCH_IMPLICIT: int = _core.MODE_PASSIVE_EPOCH_IMPLICIT
FLAVOR_CREATE: int = _core.FLAVOR_CREATE
FLAVOR_ALLOCATE: int = _core.FLAVOR_ALLOCATE
FLAVOR_DYNAMIC: int = _core.FLAVOR_DYNAMIC
FLAVOR_SHARED: int = _core.FLAVOR_SHARED
PROC_NULL: int = _core.PROC_NULL
WIN_UNIFIED: int = _core.WIN_UNIFIED
WIN_SEPARATE: int = _core.WIN_SEPARATE

# The predefined attribute keys of Get_attr (MPICH's numbers; mpi4py's
# MPI.WIN_* keys are recognised too, whatever their numbers), and the value
# Free_keyval returns.
WIN_BASE: int = 0x66000001
WIN_SIZE: int = 0x66000003
WIN_DISP_UNIT: int = 0x66000005
WIN_CREATE_FLAVOR: int = 0x66000007
WIN_MODEL: int = 0x66000009
KEYVAL_INVALID: int = 0x24000000

_PREDEFINED = {WIN_BASE: "WIN_BASE", WIN_SIZE: "WIN_SIZE", WIN_DISP_UNIT: "WIN_DISP_UNIT",
               WIN_CREATE_FLAVOR: "WIN_CREATE_FLAVOR", WIN_MODEL: "WIN_MODEL"}
_FLAVOR_NAMES = {FLAVOR_CREATE: "WIN_FLAVOR_CREATE", FLAVOR_ALLOCATE: "WIN_FLAVOR_ALLOCATE",
                 FLAVOR_SHARED: "WIN_FLAVOR_SHARED", FLAVOR_DYNAMIC: "WIN_FLAVOR_DYNAMIC"}
_MODEL_NAMES = {WIN_UNIFIED: "WIN_UNIFIED", WIN_SEPARATE: "WIN_SEPARATE"}

# User attribute keys (Create_keyval): key -> (copy_fn, delete_fn). Numbered
# from a range no MPI uses for its predefined keys.
_keyvals: dict[int, tuple[Any, Any]] = {}
_next_keyval = itertools.count(0x4F530001)

# Create(None): a window with no memory at address 0, as MPI.BOTTOM.
_NO_MEMORY = (ctypes.c_char * 0).from_address(0)


def _mpi() -> Any:
    """mpi4py.MPI when the program imported it (never imported here)."""
    return sys.modules.get("mpi4py.MPI")


def _proc_null(rank: Any) -> Any:
    """onesided's PROC_NULL for onesided's or mpi4py's PROC_NULL (Open MPI
    numbers it differently); any other rank as it is (the core checks it)."""
    if rank == PROC_NULL:
        return PROC_NULL
    mpi = _mpi()
    return PROC_NULL if mpi is not None and rank == mpi.PROC_NULL else rank


def _not_a_handle(what: str) -> NotImplementedError:
    return NotImplementedError(
        f"{what}: onesided windows are not MPI handles (onesided never links MPI); "
        "pass the Window object itself")


class _WindowType(type(_core.Window)):  # type: ignore[misc]
    """Window's metaclass: ``Window()`` is the null window and
    ``Window(win)`` is ``win``, as ``MPI.Win()`` and ``MPI.Win(win)``."""

    def __call__(cls, win: Any = None) -> Any:
        if win is None:
            return _NULL
        if isinstance(win, (Window, NullWindow)):
            return win
        raise TypeError(f"Window(win) takes a Window, got {type(win).__name__}; "
                        "create windows with Window.Create(...), Allocate(...), ...")

    def __instancecheck__(cls, obj: Any) -> bool:
        return type.__instancecheck__(cls, obj) or (cls is Window and type(obj) is NullWindow)


class Window(_core.Window, metaclass=_WindowType):
    """Memory that every rank of a communicator exposes for one-sided access.

    Create windows with :meth:`Create`, :meth:`Allocate`,
    :meth:`Allocate_shared` or :meth:`Create_dynamic` (collective calls).
    The window itself exports its local memory through the buffer protocol.
    ``Window()`` is the null window (false, as ``MPI.WIN_NULL``).

    A window created over an mpi4py communicator (or given an ``MPI.Info``)
    answers with mpi4py's objects and numbers, so ``MPI.Win`` code runs
    unchanged: ``Get_info``/``info`` give an ``MPI.Info``, ``Get_group``/
    ``group`` an ``MPI.Group``, ``tomemory``/``Shared_query`` an
    ``MPI.buffer``, ``flavor``/``model``/``Get_attr`` mpi4py's
    ``WIN_FLAVOR_*``/``WIN_UNIFIED`` values. Over onesided's ``COMM_WORLD``
    the same calls give :class:`onesided.Info` (a dict with MPI.Info's
    methods), :class:`onesided.Group`, :class:`onesided.buffer` and onesided's
    constants.
    """

    _memory: Any
    _comm: Any  # the communicator the caller passed
    _own_comm: Any  # the window's own duplicate of it (mpi4py), or the same object
    _mpi_module: Any  # mpi4py.MPI when the window speaks mpi4py (see the class docstring)
    _freed: bool
    _name: str
    _attributes: dict[int, Any]
    _pending: dict[int, list[Any]]
    _attached: dict[int, Any]
    _holds: bool  # whether operations can outlive their call
    # The binding's shortcut forms as this window uses them (_bind_shortcuts):
    # called with the window first; True once the operation is issued.
    _put_shortcut: Callable[..., bool]
    _get_shortcut: Callable[..., bool]
    _accumulate_shortcut: Callable[..., bool]
    _get_accumulate_shortcut: Callable[..., bool]
    _fetch_and_op_shortcut: Callable[..., bool]
    _compare_and_swap_shortcut: Callable[..., bool]
    _rmw_shortcut: Callable[..., bool]
    _rmw2_shortcut: Callable[..., bool]

    @classmethod
    def _make(cls, memory: Any, disp_unit: int, info: Any, comm: Any, flavor: int) -> "Window":
        comm = mpi_args.communicator(comm)
        mpi = _mpi()
        speaks_mpi = mpi is not None and (isinstance(comm, mpi.Comm) or isinstance(info, mpi.Info))
        # An MPI window outlives the communicator it was created over: keep
        # a duplicate (creation is collective anyway), freed by Free.
        own = comm.Dup() if mpi is not None and isinstance(comm, mpi.Comm) else comm
        self = cls.__new__(cls)
        try:
            # Checks that fail at every rank alike (over `own`, which the
            # other ranks' factories use), never at this one alone.
            memory, disp_unit, hints = mpi_args.creation(memory, disp_unit, info, own, flavor)
            _core.Window.__init__(self, memory, disp_unit, hints, own, flavor)
        except BaseException:
            if own is not comm:
                own.Free()  # creation fails at every rank alike, so this is collective too
            raise
        self._memory = memory
        self._comm = comm
        self._own_comm = own
        self._mpi_module = mpi if speaks_mpi else None
        self._freed = False
        self._name = ""
        self._attributes = {}
        self._pending = {}
        self._attached = {}
        # Decided once: the path is fixed for the window's life.
        self._holds = not self._completes_in_call
        self._bind_shortcuts()
        if not self._holds and (mpi is None or mpi.PROC_NULL == PROC_NULL):
            # Nothing is ever in flight or kept: Flush is the core's fence,
            # called straight from the instance (no Python frame, no GIL
            # release), which is most of its cost from Python.
            self.Flush = self._flush_inline  # type: ignore[method-assign]
        return self

    # -- creation --------------------------------------------------------------

    @classmethod
    def Create(cls, memory: Any, disp_unit: int = 1, info: Any = None, comm: Any = None) -> "Window":
        """Collective: expose ``memory`` (any writable C-contiguous buffer; a
        slice of a larger array exposes only the slice) to every rank of
        ``comm`` (default: onesided.COMM_WORLD; any mpi4py communicator works).
        The window keeps a reference to ``memory``."""
        if memory is None:
            memory = _NO_MEMORY  # as MPI.BOTTOM: no memory, base address 0
        # memory is checked in _make, collectively (mpi_args.creation).
        return cls._make(memory, disp_unit, info, comm, FLAVOR_CREATE)

    @classmethod
    def Allocate(cls, size: int, disp_unit: int = 1, info: Any = None, comm: Any = None) -> "Window":
        """Collective: allocate ``size`` zeroed bytes owned by the window and
        expose them. Reach them with :meth:`tomemory` or ``np.frombuffer(win, dtype)``."""
        # size is checked in _make, collectively (mpi_args.creation). The core allocates: in memory every rank maps when the
        # shared-memory path applies, else 64-byte aligned.
        return cls._make(size, disp_unit, info, comm, FLAVOR_ALLOCATE)

    @classmethod
    def Allocate_shared(cls, size: int, disp_unit: int = 1, info: Any = None, comm: Any = None) -> "Window":
        """Collective, every rank of ``comm`` on one host: allocate ``size``
        zeroed bytes per rank in memory every rank maps, so
        :meth:`Shared_query` gives direct load/store access to any rank's
        segment. Segments are contiguous in rank order unless info
        ``alloc_shared_noncontig="true"`` (then each starts on a page).
        RMA calls work on it as on any window."""
        return cls._make(size, disp_unit, info, comm, FLAVOR_SHARED)

    @classmethod
    def Create_dynamic(cls, info: Any = None, comm: Any = None) -> "Window":
        """Collective: a window with no memory until :meth:`Attach`. Target
        displacements are absolute addresses (see :func:`onesided.Get_address`);
        an address range outside the target's attached memory raises
        :class:`BoundsError` at the origin."""
        return cls._make(None, 1, info, comm, FLAVOR_DYNAMIC)

    def Shared_query(self, rank: int) -> tuple[Any, int]:
        """``(memory, disp_unit)`` of ``rank``'s segment of an
        Allocate_shared window: writable bytes (an ``MPI.buffer``, or a
        :class:`onesided.buffer`, see the class docstring), valid on this
        rank for direct loads and stores (``m[:] = 0``,
        ``np.frombuffer(memory, dtype)``). ``PROC_NULL`` gives the first rank
        with a non-empty segment. Plain loads and stores are not atomic and
        need Sync + a barrier (or an epoch) to be seen by other ranks."""
        array, disp_unit = self._shared_query(mpi_args.rank(rank))
        return self._buffer(array, int(array.__array_interface__["data"][0]) if array.size else 0), int(disp_unit)

    def _buffer(self, memory: Any, address: int) -> Any:
        if self._mpi_module is not None:
            return self._mpi_module.buffer.frombuffer(memory, readonly=False)
        return buffer.wrap(memory, self, address)

    def Attach(self, memory: Any) -> None:
        """Expose ``memory`` (a writable C-contiguous buffer) through this
        dynamic window; the window keeps a reference until :meth:`Detach`.
        Local: origins learn of it at their next epoch start."""
        self._attach(memory)
        self._attached[Get_address(memory)] = memory

    def Detach(self, memory: Any) -> None:
        """Withdraw memory attached with :meth:`Attach`; later accesses to it
        raise :class:`BoundsError` at origins that started an epoch since."""
        address = Get_address(memory)
        self._detach(address)
        self._attached.pop(address, None)

    def Free(self) -> None:
        """Collective: complete every pending operation, then release the
        window (and its duplicate of the communicator); attribute delete
        callbacks run. Illegal inside a Lock/Lock_all, Start or Post epoch;
        a second Free raises :class:`EpochError` (``free()`` does not)."""
        self._free()
        self._freed = True
        self._pending.clear()
        self._attached.clear()
        if self._own_comm is not self._comm:
            self._own_comm.Free()
        for key in list(self._attributes):
            self._delete_attr(key)

    def free(self) -> None:
        """Free the window unless it is already freed (mpi4py 4's ``free``,
        which ``mpi4py.util.sync`` calls)."""
        if not self._freed:
            self.Free()

    def __bool__(self) -> bool:
        """False once freed (as ``MPI.Win`` after ``Free``)."""
        return not self._freed

    def __eq__(self, other: object) -> bool:
        return other is self

    def __ne__(self, other: object) -> bool:
        return other is not self

    __hash__ = object.__hash__

    def __reduce__(self) -> Any:
        raise ArgumentError("cannot serialize 'onesided.Window' instance: a window is local to its processes")

    def __enter__(self) -> "Window":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.Free()

    # -- attributes ------------------------------------------------------------

    def tomemory(self) -> Any:
        """The local window memory as writable bytes: an ``MPI.buffer`` on a
        window that speaks mpi4py, else a :class:`onesided.buffer` (both take
        ``m[:] = 0``, ``len``, ``.address``, ``.nbytes``, ``.obj``,
        ``memoryview(m)``, ``np.frombuffer(m, dtype)``)."""
        self._check_live("tomemory")
        return self._buffer(self, self._address)

    @property
    def attrs(self) -> tuple[int, int, int]:
        """(base address, size in bytes, disp_unit), as mpi4py's ``Win.attrs``."""
        return (self._address, self._size, self._disp_unit)

    @property
    def flavor(self) -> int:
        """FLAVOR_CREATE (memory the user gave), FLAVOR_ALLOCATE (memory the
        window owns), FLAVOR_SHARED (Allocate_shared) or FLAVOR_DYNAMIC; on a
        window that speaks mpi4py, mpi4py's ``MPI.WIN_FLAVOR_*`` value (the
        same numbers on MPICH, not on Open MPI)."""
        return self._translated(self._flavor, _FLAVOR_NAMES)

    @property
    def model(self) -> int:
        """WIN_UNIFIED on every provider onesided knows and on shared
        windows: RMA updates land in the memory local loads read, with no
        separate public copy; they are seen once the epoch that completes
        them ends (plus Sync for loads racing with it). WIN_SEPARATE for a
        provider onesided has not checked. See docs/semantics.md. On a
        window that speaks mpi4py, ``MPI.WIN_UNIFIED``/``MPI.WIN_SEPARATE``."""
        return self._translated(self._model, _MODEL_NAMES)

    def _translated(self, value: int, names: dict[int, str]) -> int:
        mpi = self._mpi_module
        return int(getattr(mpi, names[value])) if mpi is not None and value in names else value

    @property
    def group_rank(self) -> int:
        """This process's rank in the window's group (its communicator)."""
        return self._rank

    @property
    def group_size(self) -> int:
        """The number of ranks in the window's group."""
        return self._group_size

    def Get_group(self) -> Any:
        """A new group of the window's processes, the caller's to ``Free``:
        an ``MPI.Group`` when the window is over an mpi4py communicator
        (IDENT to that communicator's group), else a :class:`onesided.Group`.
        Valid after the communicator itself was freed."""
        self._check_live("Get_group")
        if self._own_comm is not self._comm or hasattr(self._own_comm, "Get_group"):
            return self._own_comm.Get_group()
        return Group(range(self._group_size), self._rank)

    @property
    def group(self) -> Any:
        """``Get_group()``."""
        return self.Get_group()

    @property
    def comm(self) -> Any:
        """The communicator the window was created over (as the caller passed it)."""
        return self._comm

    @property
    def provider(self) -> str:
        """The libfabric provider moving this window's data."""
        return self._provider

    # -- info ------------------------------------------------------------------

    @property
    def info(self) -> Any:
        """``Get_info()``; assigning calls ``Set_info``."""
        return self.Get_info()

    @info.setter
    def info(self, info: Any) -> None:
        self.Set_info(info)

    def Get_info(self) -> Any:
        """The hints in force (provider, accumulate_ordering, atomics,
        onesided_path, ...): a new ``MPI.Info`` (the caller's to free) on a
        window that speaks mpi4py, else a :class:`onesided.Info` (a dict
        with MPI.Info's methods)."""
        self._check_live("Get_info")
        hints = self._info()
        mpi = self._mpi_module
        if mpi is None:
            return Info(hints)
        out = mpi.Info.Create()
        for key, value in hints.items():
            out.Set(key, value)
        return out

    def Set_info(self, info: Any) -> None:
        """Accepted (a dict, ``MPI.Info``, ``MPI.INFO_NULL`` or None) and
        ignored: a window's hints are fixed at creation, which MPI allows
        (an implementation may ignore hints; ``Get_info`` says what is in force)."""
        self._check_live("Set_info")
        mpi_args.info_dict(info)

    # -- name ------------------------------------------------------------------

    def Get_name(self) -> str:
        """The name given with ``Set_name`` ("" until then)."""
        return self._name

    def Set_name(self, name: str) -> None:
        """Name the window (local, for the user's own messages)."""
        self._name = str(name)

    @property
    def name(self) -> str:
        return self._name

    @name.setter
    def name(self, name: str) -> None:
        self.Set_name(name)

    # -- attribute caching (Get_attr and keyvals) ------------------------------

    def Get_attr(self, keyval: int) -> Any:
        """The predefined attributes ``WIN_BASE`` (base address; 0 on a
        dynamic window), ``WIN_SIZE``, ``WIN_DISP_UNIT``,
        ``WIN_CREATE_FLAVOR`` and ``WIN_MODEL`` (mpi4py's ``MPI.WIN_*`` keys or
        onesided's), or a user attribute set with ``Set_attr`` (None if unset)."""
        self._check_live("Get_attr")
        if keyval in self._attributes:
            return self._attributes[keyval]
        if keyval in _keyvals:
            return None
        name = self._predefined(keyval)
        if name is None:
            raise ArgumentError(f"Get_attr: {keyval!r} is not an attribute key (Create_keyval makes one)")
        return {"WIN_BASE": lambda: self._address, "WIN_SIZE": lambda: self._size,
                "WIN_DISP_UNIT": lambda: self._disp_unit, "WIN_CREATE_FLAVOR": lambda: self.flavor,
                "WIN_MODEL": lambda: self.model}[name]()

    def Set_attr(self, keyval: int, attrval: Any) -> None:
        """Store ``attrval`` under a key from ``Create_keyval`` (replacing,
        and calling the key's delete_fn on, any earlier value)."""
        self._check_live("Set_attr")
        self._user_key(keyval, "Set_attr")
        if keyval in self._attributes:
            self._delete_attr(keyval)
        self._attributes[keyval] = attrval

    def Delete_attr(self, keyval: int) -> None:
        """Remove the attribute (calling the key's delete_fn)."""
        self._check_live("Delete_attr")
        self._user_key(keyval, "Delete_attr")
        if keyval not in self._attributes:
            raise ArgumentError(f"Delete_attr: no attribute under key {keyval}")
        self._delete_attr(keyval)

    @classmethod
    def Create_keyval(cls, copy_fn: Any = None, delete_fn: Any = None, nopython: bool = False) -> int:
        """A new attribute key. ``delete_fn(win, keyval, value)`` runs when a
        value is deleted, replaced or its window freed; ``copy_fn`` is never
        called (windows are not duplicated)."""
        key = next(_next_keyval)
        _keyvals[key] = (copy_fn, delete_fn)
        return key

    @classmethod
    def Free_keyval(cls, keyval: int) -> int:
        """Forget the key (values already set stay until deleted); returns
        ``KEYVAL_INVALID`` (mpi4py's when it is imported)."""
        if _keyvals.pop(keyval, None) is None:
            raise ArgumentError(f"Free_keyval: {keyval!r} is not a key from Create_keyval")
        mpi = _mpi()
        return int(mpi.KEYVAL_INVALID) if mpi is not None else KEYVAL_INVALID

    def _predefined(self, keyval: Any) -> str | None:
        mpi = _mpi()
        if mpi is not None:
            for name in _PREDEFINED.values():
                if keyval == getattr(mpi, name):
                    return name
        return _PREDEFINED.get(keyval)

    @staticmethod
    def _user_key(keyval: Any, what: str) -> None:
        if keyval not in _keyvals:
            raise ArgumentError(f"{what}: {keyval!r} is not a key from Create_keyval")

    def _delete_attr(self, keyval: int) -> None:
        value = self._attributes.pop(keyval)
        delete_fn = _keyvals.get(keyval, (None, None))[1]
        if delete_fn is not None:
            delete_fn(self, keyval, value)

    def _check_live(self, what: str) -> None:
        if self._freed:
            raise EpochError(f"{what}: the window has been freed")

    # -- error handlers and MPI handles (not applicable) -------------------------

    @classmethod
    def Create_errhandler(cls, errhandler_fn: Any) -> Any:
        """Not applicable: onesided reports every error as a Python exception."""
        raise NotImplementedError("Create_errhandler: onesided raises exceptions, it has no error handlers")

    def Get_errhandler(self) -> Any:
        """``MPI.ERRORS_RETURN`` (None without mpi4py): errors are raised as
        exceptions, which is what mpi4py's default handler gives."""
        mpi = _mpi()
        return mpi.ERRORS_RETURN if mpi is not None else None

    def Set_errhandler(self, errhandler: Any) -> None:
        """Accepted and ignored: every error is raised as an exception, as
        with ``MPI.ERRORS_RETURN`` (mpi4py's default); onesided never aborts
        the job, even under ``MPI.ERRORS_ARE_FATAL``."""

    def Call_errhandler(self, errorcode: int) -> None:
        """Not applicable: onesided has no MPI error codes."""
        raise NotImplementedError("Call_errhandler: onesided raises exceptions, it has no error handlers")

    @classmethod
    def fromhandle(cls, handle: int) -> "Window":
        raise _not_a_handle("Window.fromhandle")

    @classmethod
    def fromint(cls, arg: int) -> "Window":
        raise _not_a_handle("Window.fromint")

    @classmethod
    def f2py(cls, arg: int) -> "Window":
        raise _not_a_handle("Window.f2py")

    def toint(self) -> int:
        raise _not_a_handle("Window.toint")

    def py2f(self) -> int:
        raise _not_a_handle("Window.py2f")

    @property
    def handle(self) -> int:
        raise _not_a_handle("Window.handle")

    @property
    def atomics(self) -> AtomicsReport:
        """Per (op, dtype): native (the provider's atomics) or software (at
        the target), and why, as decided at creation from the declared
        ``accumulate_ops``, ``accumulate_ordering`` and each rank's probe;
        and the window's data path."""
        return AtomicsReport(self)

    def __repr__(self) -> str:
        flavor = {FLAVOR_CREATE: "create", FLAVOR_ALLOCATE: "allocate", FLAVOR_SHARED: "shared",
                  FLAVOR_DYNAMIC: "dynamic"}.get(self._flavor, "?")
        return (
            f"<onesided.Window {flavor} rank {self._rank}/{self._group_size} "
            f"{self._size} B disp_unit={self._disp_unit} provider={self._provider} "
            f"path={self._path_name} ({self._path_description}) atomics: {self.atomics.summary()}>"
        )

    # -- operations ------------------------------------------------------------
    #
    # Each operation is one line: the binding's shortcut form issues it when
    # the arguments are plain arrays, int ranks and known ops, else _issue
    # parses them in full (_operations.py). The shortcut form is an instance
    # attribute chosen once at creation (_bind_shortcuts) and called with the
    # window as its first argument. It is called here rather than from a
    # helper because a Python frame costs about 0.14 us on this machine, a
    # third of an 8-byte Fetch_and_op + Flush on the shared-memory path.

    def _bind_shortcuts(self) -> None:
        # Where every operation completes in its call, the form that keeps
        # the GIL: nothing waits and nothing needs keeping. Elsewhere the
        # form that releases it and then keeps the arrays in _pending until
        # a completion point drops them. The bindings' plain functions
        # (__func__ of pybind11's method wrappers), so the window holds no
        # reference to itself.
        bindings = vars(_core.Window)
        for name in _core.SHORTCUT_FORMS:
            if self._holds:
                form = partial(bindings[f"_{name}_shortcut_nogil"].__func__, self._pending)
            else:
                form = bindings[f"_{name}_shortcut_inline"].__func__
            setattr(self, f"_{name}_shortcut", form)

    def _issue(self, full: Callable[..., operations.Issued], target_rank: int, *args: Any) -> None:
        # The full path of an operation the shortcut did not take. A
        # PROC_NULL target (onesided's or mpi4py's) is a no-op whatever the
        # buffers, None included, as in MPI.
        if _proc_null(target_rank) == PROC_NULL:
            return
        self._keep(target_rank, *full(self, target_rank, *args).buffers)

    def _issue_request(self, full: Callable[..., operations.Issued], target_rank: int, *args: Any) -> Request:
        if _proc_null(target_rank) == PROC_NULL:
            self._check_live("a request-based operation")
            return Request()  # complete at once
        issued = full(self, target_rank, *args, request=True)
        return Request(issued.core, issued.buffers)

    def _keep(self, rank: int, *objs: Any) -> None:
        # Buffers must outlive the operation; drop them at completion. Where
        # operations complete in their call there is nothing to keep.
        if self._holds:
            self._pending.setdefault(rank, []).extend(objs)

    def Put(self, origin: Any, target_rank: int, target: Any = None) -> None:
        """Write ``origin`` into the target's window. Not atomic, unordered;
        complete at the next flush, unlock or fence of ``target_rank``."""
        self._put_shortcut(self, origin, target_rank, 0 if target is None else target) or self._issue(
            operations.put, target_rank, origin, target)

    def Get(self, origin: Any, target_rank: int, target: Any = None) -> None:
        """Read the target's window into ``origin`` (written when the
        operation completes). Not atomic, unordered."""
        self._get_shortcut(self, origin, target_rank, 0 if target is None else target) or self._issue(
            operations.get, target_rank, origin, target)

    def Rput(self, origin: Any, target_rank: int, target: Any = None) -> Request:
        """Put returning a Request: complete (origin buffer reusable, data at
        the target) when the Request is, or at a flush/unlock of ``target_rank``."""
        return self._issue_request(operations.put, target_rank, origin, target)

    def Rget(self, origin: Any, target_rank: int, target: Any = None) -> Request:
        """Get returning a Request: ``origin`` holds the data once the Request completes."""
        return self._issue_request(operations.get, target_rank, origin, target)

    def Raccumulate(self, origin: Any, target_rank: int, target: Any = None, op: Any = SUM) -> Request:
        """Accumulate returning a Request; atomicity and ordering as Accumulate."""
        return self._issue_request(operations.accumulate, target_rank, origin, target, op)

    def Rget_accumulate(
        self, origin: Any, result: Any, target_rank: int, target: Any = None, op: Any = SUM
    ) -> Request:
        """Get_accumulate returning a Request; ``result`` is valid once it completes."""
        return self._issue_request(operations.get_accumulate, target_rank, origin, result, target, op)

    def Accumulate(self, origin: Any, target_rank: int, target: Any = None, op: Any = SUM) -> None:
        """target = op(target, origin), atomic per element, ordered with the
        other accumulate-style calls from this origin."""
        self._accumulate_shortcut(self, origin, target_rank, 0 if target is None else target, op) or self._issue(
            operations.accumulate, target_rank, origin, target, op)

    def Get_accumulate(
        self, origin: Any, result: Any, target_rank: int, target: Any = None, op: Any = SUM
    ) -> None:
        """result = target; target = op(target, origin), atomically per element.
        With op=NO_OP it is an atomic read and ``origin`` may be None."""
        self._get_accumulate_shortcut(
            self, origin, result, target_rank, 0 if target is None else target, op
        ) or self._issue(operations.get_accumulate, target_rank, origin, result, target, op)

    def Fetch_and_op(self, origin: Any, result: Any, target_rank: int, target_disp: int = 0, op: Any = SUM) -> None:
        """The one-element Get_accumulate: result = target; target = op(target, origin)."""
        self._fetch_and_op_shortcut(self, origin, result, target_rank, target_disp, op) or self._issue(
            operations.fetch_and_op, target_rank, origin, result, target_disp, op)

    def Compare_and_swap(
        self, origin: Any, compare: Any, result: Any, target_rank: int, target_disp: int = 0
    ) -> None:
        """result = target; if target == compare: target = origin. One element,
        atomic with every other accumulate-style call."""
        self._compare_and_swap_shortcut(self, origin, compare, result, target_rank, target_disp) or self._issue(
            operations.compare_and_swap, target_rank, origin, compare, result, target_disp)

    def Rmw(self, origin: Any, result: Any, target_rank: int, target_disp: int = 0,
            op: Any = RMW_OPS["RMW_SUM"], assertion: int = 0) -> None:
        """Generalised read-modify-write (seed 002): per element, result =
        target, then target = op(target, origin). Ops: RMW_INC (origin may be
        None), RMW_SUM, RMW_PROD, RMW_MIN, RMW_MAX, RMW_LAND, RMW_LOR,
        RMW_LXOR, RMW_BAND, RMW_BOR, RMW_BXOR, RMW_SWAP. Each element is atomic
        with every accumulate-style call; the vector as a whole is not.
        Completes like the other RMA calls, or, with
        MODE_PASSIVE_EPOCH_IMPLICIT, before returning, inside its own
        exclusive lock epoch (no lock with MODE_NOCHECK as well)."""
        # An assertion (an implicit epoch) always takes the full path.
        (not assertion and self._rmw_shortcut(self, origin, result, target_rank, target_disp, op)) or self._issue(
            operations.rmw, target_rank, origin, result, target_disp, op, assertion)

    def Rmw2(self, origin: Any, origin2: Any, result: Any, target_rank: int, target_disp: int = 0,
             op: Any = RMW2_OPS["RMW2_COMP_SWAP_EQ"], assertion: int = 0) -> None:
        """Two-operand read-modify-write: RMW2_MASK_SWAP (origin = mask,
        origin2 = value: target = (target & ~mask) | (value & mask)) and
        RMW2_COMP_SWAP_LT/_LE/_EQ/_GE/_GT/_NE (origin = comperand, origin2 =
        swaperand: when ``comperand OP target`` holds, target = swaperand).
        result receives the old values; same atomicity and completion as Rmw."""
        (
            not assertion and self._rmw2_shortcut(self, origin, origin2, result, target_rank, target_disp, op)
        ) or self._issue(operations.rmw2, target_rank, origin, origin2, result, target_disp, op, assertion)

    def Rrmw(self, origin: Any, result: Any, target_rank: int, target_disp: int = 0,
             op: Any = RMW_OPS["RMW_SUM"], assertion: int = 0) -> Request:
        """Rmw returning a Request that completes with the operation."""
        return self._issue_request(operations.rmw, target_rank, origin, result, target_disp, op, assertion)

    def Rrmw2(self, origin: Any, origin2: Any, result: Any, target_rank: int, target_disp: int = 0,
              op: Any = RMW2_OPS["RMW2_COMP_SWAP_EQ"], assertion: int = 0) -> Request:
        """Rmw2 returning a Request that completes with the operation."""
        return self._issue_request(operations.rmw2, target_rank, origin, origin2, result, target_disp, op, assertion)

    # -- synchronisation -------------------------------------------------------

    def Fence(self, assertion: int = 0) -> None:
        """Collective: completes every operation issued since the previous
        fence, at origin and target, then opens the next fence epoch (unless
        MODE_NOSUCCEED)."""
        self._fence(mpi_args.assertion(assertion))
        self._pending.clear()

    def Lock(self, rank: int, lock_type: int = LOCK_EXCLUSIVE, assertion: int = 0) -> None:
        """Begin a passive-target epoch at ``rank``; returns once the lock is
        held (exclusive: no other origin holds it; shared: no exclusive holder).
        With MODE_NOCHECK no lock is taken: you promise no conflicting one."""
        self._lock(_proc_null(rank), mpi_args.lock_type(lock_type), mpi_args.assertion(assertion))

    def Unlock(self, rank: int) -> None:
        """Complete every operation to ``rank`` (at the target too), then release the lock."""
        rank = rank if type(rank) is int and rank >= 0 else _proc_null(rank)
        self._unlock(rank)
        self._pending.pop(rank, None)

    def Lock_all(self, assertion: int = 0) -> None:
        """A shared lock on every rank of the window."""
        self._lock_all(mpi_args.assertion(assertion))

    def Unlock_all(self) -> None:
        """Complete every operation, then release the Lock_all locks."""
        self._unlock_all()
        self._pending.clear()

    def Flush(self, rank: int) -> None:
        """Complete every operation to ``rank``, at origin and target: after it
        returns, other processes that synchronise with this one see the effects.
        PROC_NULL: nothing to do."""
        rank = rank if type(rank) is int and rank >= 0 else _proc_null(rank)
        self._flush(rank)
        self._pending.pop(rank, None)

    def Flush_all(self) -> None:
        """Flush every target: every operation this process issued on the
        window is complete at origin and target."""
        self._flush_all()
        self._pending.clear()

    def Flush_local(self, rank: int) -> None:
        """Complete operations to ``rank`` locally (buffers reusable). onesided
        completes them remotely too, which is stronger."""
        rank = rank if type(rank) is int and rank >= 0 else _proc_null(rank)
        self._flush_local(rank)
        self._pending.pop(rank, None)

    def Flush_local_all(self) -> None:
        """Flush_local every target (onesided completes remotely, which is stronger)."""
        self._flush_local_all()
        self._pending.clear()

    def Sync(self) -> None:
        """A full memory barrier: local stores before it are visible to RMA
        and to other ranks' loads (shared windows) after it, and RMA updates
        completed before it are seen by local loads after it. In the
        separate model this is what reconciles the public and private copies."""
        self._sync()

    def Post(self, group: Any, assertion: int = 0) -> None:
        """Open an exposure epoch for the origins in ``group`` (a list of
        ranks or an mpi4py MPI.Group). Does not block. Local stores made
        before Post are visible to their RMA."""
        self._post(self._group_ranks(group), mpi_args.assertion(assertion))

    def Start(self, group: Any, assertion: int = 0) -> None:
        """Open an access epoch to the targets in ``group``. Does not block:
        an operation to a target waits until that target has posted, so
        Start may precede the matching Post anywhere."""
        self._start(self._group_ranks(group), mpi_args.assertion(assertion))

    def _group_ranks(self, group: Any) -> list[int]:
        # onesided.Group (from Get_group) iterates over its window ranks.
        return mpi_args.group_ranks(list(group) if isinstance(group, Group) else group, self._own_comm)

    def Complete(self) -> None:
        """End the access epoch: every operation issued in it is complete at
        origin and target, and each target of the group is notified."""
        self._complete()
        self._pending.clear()

    def Wait(self) -> bool:
        """End the exposure epoch: returns True once every origin of the Post
        group has called Complete; their updates are then visible locally."""
        self._wait()
        return True

    def Test(self) -> bool:
        """Wait without blocking: True (and the exposure epoch ends) once
        every origin of the Post group has called Complete, else False."""
        done: bool = self._test()
        return done

    # -- conveniences ----------------------------------------------------------

    @contextmanager
    def lock(self, rank: int, shared: bool = False, assertion: int = 0) -> Iterator["Window"]:
        """``with win.lock(rank):`` Lock on entry, Unlock (which completes
        everything issued inside) on exit."""
        self.Lock(rank, LOCK_SHARED if shared else LOCK_EXCLUSIVE, assertion)
        try:
            yield self
        finally:
            self.Unlock(rank)

    @contextmanager
    def lock_all(self, assertion: int = 0) -> Iterator["Window"]:
        """``with win.lock_all():`` Lock_all on entry, Unlock_all on exit."""
        self.Lock_all(assertion)
        try:
            yield self
        finally:
            self.Unlock_all()



class NullWindow:
    """The null window, ``Window()`` (mpi4py's ``MPI.WIN_NULL``): false in a
    boolean context, equal to every null window (and to ``MPI.WIN_NULL``),
    ``free()`` does nothing, and anything else raises :class:`EpochError`.
    ``isinstance(Window(), Window)`` is True."""

    __slots__ = ()

    def __bool__(self) -> bool:
        return False

    def __eq__(self, other: object) -> bool:
        if isinstance(other, NullWindow):
            return True
        mpi = _mpi()
        return mpi is not None and isinstance(other, mpi.Win) and other == mpi.WIN_NULL

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = object.__hash__

    def __reduce__(self) -> Any:
        raise ArgumentError("cannot serialize 'onesided.Window' instance")

    def free(self) -> None:
        """Nothing to free."""

    def __repr__(self) -> str:
        return "<onesided.Window null>"

    def __getattr__(self, name: str) -> Any:
        member = getattr(Window, name, None) if not name.startswith("__") else None
        if member is None:
            raise AttributeError(name)
        message = f"{name}: the window is the null window (Window())"
        if isinstance(member, property):
            raise EpochError(message)

        def null_call(*args: Any, **kwargs: Any) -> Any:
            raise EpochError(message)

        return null_call


_NULL = object.__new__(NullWindow)
