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
  data call, Lock, Unlock, Flush and Flush_local a no-op, after checking
  every other argument as for any rank (so a mistake raises at every rank of
  a halo exchange alike); only its buffers may be None. An R* call's
  request is complete at once.
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
import warnings
from typing import Any

from .. import _core
from .._errors import EpochError
from ..args import _mpi_args as mpi_args
from ..comm._deadline import DeadlineExpired, deadline
from ..comm._polled import PolledComm, duplicate
from ._constants import (
    FLAVOR_ALLOCATE,
    FLAVOR_CREATE,
    FLAVOR_DYNAMIC,
    FLAVOR_SHARED,
    _mpi,
)
from ._mpi_objects import Get_address
from ._notify import WindowNotify
from ._null_window import NullWindow
from ._rma_methods import WindowCalls
from ._surface import WindowSurface
from ._sync import WindowSync

# Seconds a Free on leaving `with` by an exception waits for the other ranks.
FREE_DEADLINE = 5.0

# Create(None): a window with no memory at address 0, as MPI.BOTTOM.
_NO_MEMORY = (ctypes.c_char * 0).from_address(0)

# What windows dropped with operations still in flight held for them (their
# buffers, their memory): kept for the process's life, as the core keeps
# the windows' bookkeeping (Window.__del__).
_KEPT: list[tuple[Any, ...]] = []


class _WindowType(type(_core.Window)):  # type: ignore[misc]
    """Window's metaclass: ``Window()`` is the null window and
    ``Window(win)`` is ``win``, as ``MPI.Win()`` and ``MPI.Win(win)``."""

    def __call__(cls, win: Any = None) -> Any:
        if win is None:
            return object.__new__(NullWindow)  # equal to WIN_NULL, not it, as MPI.Win()
        if isinstance(win, (Window, NullWindow)):
            return win
        raise TypeError(f"Window(win) takes a Window, got {type(win).__name__}; "
                        "create windows with Window.Create(...), Allocate(...), ...")

    def __instancecheck__(cls, obj: Any) -> bool:
        return type.__instancecheck__(cls, obj) or (cls is Window and type(obj) is NullWindow)


class Window(WindowCalls, WindowSurface, WindowSync, WindowNotify, _core.Window, metaclass=_WindowType):
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
    _holds_results: bool  # whether a plain Get's result can be written after its call (_holds, or a staged Get)

    @classmethod
    def _make(cls, memory: Any, disp_unit: int, info: Any, comm: Any, flavor: int) -> "Window":
        comm = mpi_args.communicator(comm)
        mpi = _mpi()
        speaks_mpi = mpi is not None and (isinstance(comm, mpi.Comm) or isinstance(info, mpi.Info))
        # An MPI window outlives the communicator it was created over: keep
        # a duplicate (creation is collective anyway), freed by Free.
        # The core's collectives over it wait in Python (comm/_polled.py), so
        # that Ctrl-C and SIGTERM's handlers reach a rank waiting there.
        own, waits_on = comm, comm
        if mpi is not None and isinstance(comm, mpi.Comm):
            own = duplicate(comm)
            waits_on = PolledComm(own, mpi)
        self = cls.__new__(cls)
        try:
            # Checks that fail at every rank alike (over `own`, which the
            # other ranks' factories use), never at this one alone.
            memory, disp_unit, hints = mpi_args.creation(memory, disp_unit, info, waits_on, flavor)
            _core.Window.__init__(self, memory, disp_unit, hints, waits_on, flavor)
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
        self._holds_results = self._holds or self._holds_get_results
        kept = self._pending if self._holds_results else None
        # The fast entries (cpp/bindings/fast_entries.hpp) as the instance's
        # Put, Get, ...: the common call with neither a Python frame nor
        # pybind11's dispatcher; anything else goes to the class's method,
        # the full parse. Where operations complete in their call they keep
        # the GIL and keep nothing; elsewhere they release it and keep the
        # arrays in _pending until a completion point drops them. On the
        # cross-memory path a small Get waits for the next completion point
        # (it is staged), so its entry alone keeps its result.
        held = None if self._holds else ("Get",)
        for name, entry in zip(_core.FAST_CALLS, _core._fast_entries(self, kept, held)):
            setattr(self, name, entry)
        # Lock's direct form on every window (it releases the GIL only to
        # wait, and never touches _pending); Flush and Unlock's where nothing
        # is ever in flight: Flush is the core's fence (and copies what is
        # staged), and Unlock's release in shared memory never waits; they
        # drop what _pending keeps for their rank.
        lock, flush, unlock = _core._direct_sync_forms(self, None if self._holds else kept)
        self.Lock = lock  # type: ignore[method-assign]
        if not self._holds:
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
        (and of an Allocate window, or a Create window over
        :func:`onesided.Alloc_mem` memory, on the shared-memory path), this rank's
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
        try:
            self._free()
        except EpochError:
            raise  # nothing was released: Free in an open epoch, or a second Free
        except BaseException:
            # An interrupted or failed Free released this rank's part in the
            # core (docs/semantics.md, "Interrupted calls"); so does this.
            self._forget()
            raise
        self._forget()

    def _forget(self) -> None:
        """This rank's side of a freed window: its references let go."""
        self._freed = True
        # The fast entries and Lock, Flush, Unlock's direct forms are bound to this window (_make):
        # drop them, so that the window, and an Allocate window's mapping
        # with it, goes as soon as nothing else refers to it, not at the
        # next collection of reference cycles.
        for name in ("Lock", "Flush", "Unlock", *_core.FAST_CALLS):
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

    def __del__(self) -> None:
        """A window dropped while operations it posted may still complete (a
        Free interrupted or given up after FREE_DEADLINE, or no Free): the
        core keeps its bookkeeping for their completions
        (``Window::in_flight``), and the buffers they read and write, with
        the window's memory, are kept here, so no operation ever touches
        freed memory. A window freed as usual keeps nothing."""
        if self._created() and self._in_flight:
            _KEPT.append((self._pending, self._memory, self._attached))


    def __enter__(self) -> "Window":
        return self

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> None:
        """Free the window. Left by an exception, the other ranks may never
        come to Free (the exception may be this rank's alone): then Free
        waits for them at most FREE_DEADLINE seconds, and if they do not
        come, releases this rank's part without them (as an interrupted
        Free does), warns naming what it gave up, and lets the exception
        go on."""
        if kind is None:
            self.Free()
            return
        if self._freed:
            return
        try:
            with deadline(FREE_DEADLINE, f"Window.Free on leaving `with` after {kind.__name__}"):
                self.Free()
        except DeadlineExpired as e:
            warnings.warn(f"{e} within {FREE_DEADLINE:g} s; this rank's part of the window was released "
                          "without them (they may still wait in Free's barrier)", RuntimeWarning, stacklevel=2)

    # -- operations ------------------------------------------------------------
    #
    # Put, Get, ... and their R* and *_notify forms are WindowCalls' methods
    # (_rma_methods.py, generated from the calls table in _calls.py): each is
    # the full parse of its call. The instance's own Put, ... are the fast
    # entries bound at creation (_make), which hand anything they do not
    # take to those methods.

    def _keep(self, rank: int, *objs: Any) -> None:
        # Buffers must outlive the operation; drop them at completion. Where
        # operations complete in their call there is nothing to keep, but a
        # staged Get's result (kept for every call of the full parse there:
        # the completion points drop them all).
        if self._holds_results:
            self._pending.setdefault(rank, []).extend(objs)
NullWindow.window_class = Window  # what a null window refuses by name (see NullWindow.__getattr__)
