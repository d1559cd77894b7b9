"""The window's synchronisation calls: fence, passive target (Lock*,
Flush*, Sync), post-start-complete-wait, and the ``with`` forms of Lock.

:class:`WindowSync` is a mixin of :class:`onesided.Window`; every call here
ends in one call on the core and drops the buffers kept for the operations it
completes (``_pending``, see ``Window._keep``)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator, TypeVar

from .. import _core
from ..args import _mpi_args as mpi_args
from ._constants import LOCK_EXCLUSIVE, LOCK_SHARED
from ._mpi_objects import Group

if TYPE_CHECKING:
    _Base = _core.Window
else:
    _Base = object

_Win = TypeVar("_Win", bound="WindowSync")  # the window a ``with`` form yields: itself


class WindowSync(_Base):
    """Fence, Lock/Unlock, Flush, Sync, Post/Start/Complete/Wait/Test."""

    _own_comm: Any
    _pending: dict[int, list[Any]]

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
        # The full parse: mpi4py's constants and PROC_NULL translated, every
        # argument checked. The instance's Lock is the binding's direct form
        # (Window._make), which takes the common call (an int rank,
        # onesided's lock type, no assertion) and hands the rest here.
        self._lock(mpi_args.rank(rank), mpi_args.lock_type(lock_type), mpi_args.assertion(assertion))

    def Unlock(self, rank: int) -> None:
        """Complete every operation to ``rank`` (at the target too), then release the lock."""
        rank = rank if type(rank) is int and rank >= 0 else mpi_args.rank(rank)
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
        rank = rank if type(rank) is int and rank >= 0 else mpi_args.rank(rank)
        self._flush(rank)
        self._pending.pop(rank, None)

    def Flush_all(self) -> None:
        """Flush every target: every operation this process issued on the
        window is complete at origin and target."""
        self._flush_all()
        self._pending.clear()

    async def flush_async(self, rank: int) -> None:
        """``Flush(rank)`` for asyncio, without blocking the event loop: waits
        (on the eventfd of ``onesided.window._aio``, not by polling) until every
        operation to ``rank`` issued before the call, by any thread, is
        complete at origin and target, then returns with Flush's guarantee:
        other processes that synchronise with this one see the effects.
        Raises what Flush would (a failed operation, a bad rank: before
        waiting). An extension beyond MPI; PROC_NULL: nothing to do."""
        rank = rank if type(rank) is int and rank >= 0 else mpi_args.rank(rank)
        from . import _aio  # here, not at import: asyncio takes 40-140 ms to import

        await _aio.completion(self._flush_request(rank))
        self.Flush(rank)  # returns at once now; reports failures, drops kept buffers

    async def flush_all_async(self) -> None:
        """``Flush_all()`` for asyncio, as :meth:`flush_async` for every target."""
        from . import _aio

        await _aio.completion(self._flush_all_request())
        self.Flush_all()

    def Flush_local(self, rank: int) -> None:
        """Complete operations to ``rank`` locally (buffers reusable). onesided
        completes them remotely too, which is stronger."""
        rank = rank if type(rank) is int and rank >= 0 else mpi_args.rank(rank)
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
        separate model this is what reconciles the public and private copies.
        On a provider path (``info["onesided_path"] == "provider"``) it also
        polls the transport once, without waiting: a loop of Syncs waiting
        for a flag progresses the transport itself, and the progress thread
        stands aside meanwhile."""
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
    def lock(self: _Win, rank: int, shared: bool = False, assertion: int = 0) -> Iterator[_Win]:
        """``with win.lock(rank):`` Lock on entry, Unlock (which completes
        everything issued inside) on exit."""
        self.Lock(rank, LOCK_SHARED if shared else LOCK_EXCLUSIVE, assertion)
        try:
            yield self
        finally:
            self.Unlock(rank)

    @contextmanager
    def lock_all(self: _Win, assertion: int = 0) -> Iterator[_Win]:
        """``with win.lock_all():`` Lock_all on entry, Unlock_all on exit."""
        self.Lock_all(assertion)
        try:
            yield self
        finally:
            self.Unlock_all()
