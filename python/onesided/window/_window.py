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

This module is the class and what it does with data: creation, Free and the
RMA calls. The synchronisation calls are in ``_sync.py``, the members of
``MPI.Win`` that are not RMA in ``_surface.py``, the notified calls in
``_notify.py``, the constants in ``_constants.py`` and the null window in
``_null_window.py``.
"""

from __future__ import annotations

import ctypes
from functools import partial
from typing import Any, Callable

from .. import _core
from .._types import OPS, RMW2_OPS, RMW_OPS
from ..args import _mpi_args as mpi_args
from ..args._mpi_args import Get_address
from . import _operations as operations
from ._constants import (
    FLAVOR_ALLOCATE,
    FLAVOR_CREATE,
    FLAVOR_DYNAMIC,
    FLAVOR_SHARED,
    PROC_NULL,
    _mpi,
    _proc_null,
)
from ._notify import WindowNotify
from ._null_window import _NULL, NullWindow
from ._request import Request
from ._surface import WindowSurface
from ._sync import WindowSync

SUM = OPS["sum"]

# Create(None): a window with no memory at address 0, as MPI.BOTTOM.
_NO_MEMORY = (ctypes.c_char * 0).from_address(0)


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


class Window(WindowSurface, WindowSync, WindowNotify, _core.Window, metaclass=_WindowType):
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
    # Class defaults (creation sets both), so a window no constructor ran
    # (Window.__new__) reaches its binding's clear error, not AttributeError.
    _own_comm: Any = None  # the window's own duplicate of it (mpi4py), or the same object
    _mpi_module: Any = None  # mpi4py.MPI when the window speaks mpi4py (see the class docstring)
    _freed: bool = False
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
    # ... and the notified ones: declared in WindowNotify (_notify.py).

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
        # The bindings' direct forms (cpp/bindings/direct_forms.hpp): the
        # common call with neither a Python frame nor pybind11's dispatcher;
        # anything else goes to the class's method. Lock on every window (it
        # releases the GIL only to wait, and never touches _pending).
        lock, flush, unlock = _core._direct_sync_forms(self)
        self.Lock = lock  # type: ignore[method-assign]
        if not self._holds:
            # Nothing is ever in flight or kept: the RMA calls keep the GIL
            # and keep nothing, Flush is the core's fence, and Unlock's
            # release in shared memory never waits.
            for name, method in zip(_core.DIRECT_FORMS, _core._direct_forms(self)):
                setattr(self, name, method)
            self.Flush = flush  # type: ignore[method-assign]
            self.Unlock = unlock  # type: ignore[method-assign]
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
        """``(memory, disp_unit)`` of ``rank``'s segment, on a window of any
        flavor (MPI 4.1): writable bytes (an ``MPI.buffer``, or a
        :class:`onesided.buffer`, see the class docstring), valid on this
        rank for direct loads and stores (``m[:] = 0``,
        ``np.frombuffer(memory, dtype)``), where this rank reaches the
        segment by load/store: every segment of an Allocate_shared window
        (and of an Allocate window on the shared-memory path), this rank's
        own segment of a Create or Allocate window. Elsewhere, and on a
        dynamic window always, the memory is empty with address 0. The
        disp_unit is ``rank``'s either way. ``PROC_NULL`` gives the first
        rank with a non-empty segment. Plain loads and stores are not
        atomic and need Sync + a barrier (or an epoch) to be seen by other
        ranks."""
        array, disp_unit = self._shared_query(mpi_args.rank(rank))
        if array is None:  # not reachable by load/store from this rank
            mpi = self._mpi_module
            return (mpi.buffer.fromaddress(0, 0) if mpi is not None else self._buffer(bytearray(), 0)), int(disp_unit)
        return self._buffer(array, int(array.__array_interface__["data"][0]) if array.size else 0), int(disp_unit)

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
        # The inline Lock, Flush, Unlock and direct forms are bound to this window (_make):
        # drop them, so that the window, and an Allocate window's mapping
        # with it, goes as soon as nothing else refers to it, not at the
        # next collection of reference cycles.
        for name in ("Lock", "Flush", "Unlock", *_core.DIRECT_FORMS):
            vars(self).pop(name, None)
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
        """False once freed (as ``MPI.Win`` after ``Free``) or never created."""
        return not self._freed and self._created()

    def __eq__(self, other: object) -> bool:
        return other is self

    def __ne__(self, other: object) -> bool:
        return other is not self

    __hash__ = object.__hash__


    def __enter__(self) -> "Window":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.Free()

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
        shortcuts = [f"_{name}_shortcut" for name in _core.SHORTCUT_FORMS]
        shortcuts += [f"_{name}_notify_shortcut" for name in _core.NOTIFIED_SHORTCUT_FORMS]
        for shortcut in shortcuts:
            if self._holds:
                form = partial(bindings[f"{shortcut}_nogil"].__func__, self._pending)
            else:
                form = bindings[f"{shortcut}_inline"].__func__
            setattr(self, shortcut, form)

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

    def Rfetch_and_op(self, origin: Any, result: Any, target_rank: int, target_disp: int = 0,
                      op: Any = SUM) -> Request:
        """Fetch_and_op returning a Request (an extension beyond MPI: MPI
        Forum issue #128). ``result`` is valid once the Request completes
        (Wait, Test, Waitall, ``await``, or a flush/unlock of
        ``target_rank``), not before; atomicity and ordering as Fetch_and_op.
        Arguments are checked as Fetch_and_op's, before anything is sent."""
        return self._issue_request(operations.fetch_and_op, target_rank, origin, result, target_disp, op)

    def Rcompare_and_swap(self, origin: Any, compare: Any, result: Any, target_rank: int,
                          target_disp: int = 0) -> Request:
        """Compare_and_swap returning a Request (an extension beyond MPI:
        MPI Forum issue #128). ``result`` is valid once the Request
        completes, not before; atomicity as Compare_and_swap. Arguments are
        checked as Compare_and_swap's, before anything is sent."""
        return self._issue_request(operations.compare_and_swap, target_rank, origin, compare, result, target_disp)


NullWindow.window_class = Window  # what a null window refuses by name (see NullWindow.__getattr__)
