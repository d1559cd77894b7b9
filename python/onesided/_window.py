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
"""

from __future__ import annotations

from contextlib import contextmanager
from functools import partial
from typing import Any, Callable, Iterator

import numpy as np

from . import _core, _mpi_args as mpi_args, _operations as operations
from ._atomics_report import AtomicsReport
from ._mpi_args import Get_address
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


class Window(_core.Window):
    """Memory that every rank of a communicator exposes for one-sided access.

    Create windows with :meth:`Create`, :meth:`Allocate`,
    :meth:`Allocate_shared` or :meth:`Create_dynamic` (collective calls).
    The window itself exports its local memory through the buffer protocol.
    """

    _memory: Any
    _comm: Any
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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("use Window.Create(...) or Window.Allocate(...)")

    @classmethod
    def _make(cls, memory: Any, disp_unit: int, info: Any, comm: Any, flavor: int) -> "Window":
        comm = mpi_args.communicator(comm)
        # Checks that fail at every rank alike, never at this one alone
        # while the others wait in the core's first agreement.
        memory, disp_unit, hints = mpi_args.creation(memory, disp_unit, info, comm, flavor)
        self = cls.__new__(cls)
        _core.Window.__init__(self, memory, disp_unit, hints, comm, flavor)
        self._memory = memory
        self._comm = comm
        self._pending = {}
        self._attached = {}
        # Decided once: the path is fixed for the window's life.
        self._holds = not self._completes_in_call
        self._bind_shortcuts()
        if not self._holds:
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
            memory = np.empty(0, dtype=np.uint8)
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

    def Shared_query(self, rank: int) -> tuple[memoryview, int]:
        """``(memory, disp_unit)`` of ``rank``'s segment of an
        Allocate_shared window: a writable byte memoryview, valid on this
        rank for direct loads and stores (``np.frombuffer(memory, dtype)``).
        ``PROC_NULL`` gives the first rank with a non-empty segment. Plain
        loads and stores are not atomic and need Sync + a barrier (or an
        epoch) to be seen by other ranks."""
        array, disp_unit = self._shared_query(mpi_args.rank(rank))
        return memoryview(array), int(disp_unit)

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
        window. Illegal inside a Lock/Lock_all, Start or Post epoch."""
        self._free()
        self._pending.clear()
        self._attached.clear()

    def __enter__(self) -> "Window":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.Free()

    # -- attributes ------------------------------------------------------------

    def tomemory(self) -> memoryview:
        """The local window memory as a writable byte memoryview."""
        return memoryview(self).cast("B")

    @property
    def attrs(self) -> tuple[int, int, int]:
        """(base address, size in bytes, disp_unit), as mpi4py's ``Win.attrs``."""
        return (self._address, self._size, self._disp_unit)

    @property
    def flavor(self) -> int:
        """FLAVOR_CREATE (memory the user gave), FLAVOR_ALLOCATE (memory the
        window owns), FLAVOR_SHARED (Allocate_shared) or FLAVOR_DYNAMIC."""
        return self._flavor

    @property
    def model(self) -> int:
        """WIN_UNIFIED on every provider onesided knows and on shared
        windows: RMA updates land in the memory local loads read, with no
        separate public copy; they are seen once the epoch that completes
        them ends (plus Sync for loads racing with it). WIN_SEPARATE for a
        provider onesided has not checked. See docs/semantics.md."""
        return self._model

    @property
    def group_rank(self) -> int:
        """This process's rank in the window's group (its communicator)."""
        return self._rank

    @property
    def group_size(self) -> int:
        """The number of ranks in the window's group."""
        return self._group_size

    @property
    def comm(self) -> Any:
        """The communicator the window was created over."""
        return self._comm

    @property
    def provider(self) -> str:
        """The libfabric provider moving this window's data."""
        return self._provider

    @property
    def info(self) -> dict[str, str]:
        """The hints in force (provider, accumulate_ordering, atomics, ...)."""
        return self._info()

    def Get_info(self) -> dict[str, str]:
        """The hints in force, as ``info`` (mpi4py's name)."""
        return self._info()

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
        # The full path of an operation the shortcut did not take.
        self._keep(target_rank, *full(self, target_rank, *args).buffers)

    def _issue_request(self, full: Callable[..., operations.Issued], target_rank: int, *args: Any) -> Request:
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
        self._lock(rank, mpi_args.lock_type(lock_type), mpi_args.assertion(assertion))

    def Unlock(self, rank: int) -> None:
        """Complete every operation to ``rank`` (at the target too), then release the lock."""
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
        returns, other processes that synchronise with this one see the effects."""
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
        self._post(mpi_args.group_ranks(group, self._comm), mpi_args.assertion(assertion))

    def Start(self, group: Any, assertion: int = 0) -> None:
        """Open an access epoch to the targets in ``group``. Does not block:
        an operation to a target waits until that target has posted, so
        Start may precede the matching Post anywhere."""
        self._start(mpi_args.group_ranks(group, self._comm), mpi_args.assertion(assertion))

    def Complete(self) -> None:
        """End the access epoch: every operation issued in it is complete at
        origin and target, and each target of the group is notified."""
        self._complete()
        self._pending.clear()

    def Wait(self) -> None:
        """End the exposure epoch: returns once every origin of the Post
        group has called Complete; their updates are then visible locally."""
        self._wait()

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

