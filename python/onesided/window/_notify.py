"""Notified RMA: operations that tell the target when their data is there,
an extension beyond MPI (MPI Forum issue #59; OpenSHMEM's ``put_signal``).

A window made with ``info={"onesided_notifications": N}`` has N counters
per rank. ``Put_notify``, ``Get_notify`` and ``Accumulate_notify`` (and
their request-based forms) are the operation followed by :meth:`Notify`:
once the operation, and every other operation this process issued to the
same target before it, is complete at the target (a put's data visible, a
get's data read so the target may reuse the memory, an accumulate
applied), the target's counter ``notification_idx`` grows by one. At the
target, :meth:`Wait_notify` and :meth:`Test_notify` wait for or look at a
count, :meth:`Get_notify_value` and :meth:`Set_notify_value` read and reset
it.

Guarantees (docs/semantics.md, "Notified RMA"):

* A notification is never seen before the data it stands for: a rank that
  saw the count reach ``k`` (through any of the calls above) reads the data
  of the first ``k`` notified operations in its window.
* Notifications from one origin to one target take effect in call order
  (seed 003's non-overtaking between one pair). Nothing is promised between
  different origins, nor between threads of one origin except as their
  calls are ordered.
* The notification needs no further call at the origin: it completes
  through onesided's progress, and at the latest at the origin's next
  flush, unlock or fence covering the target. Counts are exact: each call
  adds exactly one.

:class:`WindowNotify` is a mixin of :class:`onesided.Window`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import _core
from ..args import _mpi_args as mpi_args
from ._constants import PROC_NULL

if TYPE_CHECKING:
    _Base = _core.Window
else:
    _Base = object


class WindowNotify(_Base):
    """Notify and the target's counter calls. (Put_notify, Get_notify,
    Accumulate_notify and their R forms are WindowCalls', from the calls
    table in _calls.py.)"""

    @property
    def notifications(self) -> int:
        """The number of notification counters per rank (info ``onesided_notifications``)."""
        return int(self._notifications)

    @property
    def notify_mechanism(self) -> str:
        """How notifications reach their target on this window: a release
        increment in shared memory (shared-memory path), or a message sent
        once the operations it follows are complete (provider paths)."""
        return str(self._notification_mechanism)

    def _notification(self, notification_idx: Any) -> Any:
        # The core's check of the index (a onesided error naming the rule),
        # before the operation it follows is issued.
        self._notify_value(notification_idx)
        return notification_idx

    def Notify(self, target_rank: int, notification_idx: int = 0) -> None:
        """Add one to ``target_rank``'s counter ``notification_idx`` once every
        operation this process issued to that rank before this call is
        complete there. Needs an access epoch to the target; returns at once."""
        index = self._notification(notification_idx)
        rank = mpi_args.rank(target_rank, "target rank")
        if rank != PROC_NULL:
            self._notify(rank, index, False)

    # -- at the target -----------------------------------------------------------

    def Get_notify_value(self, notification_idx: int = 0) -> int:
        """This rank's count at ``notification_idx``; the data of the
        operations it counts is visible once this returns."""
        return int(self._notify_value(notification_idx))

    def Set_notify_value(self, notification_idx: int = 0, value: int = 0) -> int:
        """Set this rank's counter (atomically: no increment arriving
        meanwhile is lost) and return its previous value."""
        return int(self._set_notify_value(notification_idx, value))

    def Test_notify(self, notification_idx: int, value: int) -> bool:
        """Whether this rank's counter ``notification_idx`` has reached
        ``value``, after one round of progress. True means the data of the
        operations counted is visible."""
        return bool(self._test_notify(notification_idx, value))

    def Wait_notify(self, notification_idx: int, value: int) -> None:
        """Block (without the GIL; progress continues) until this rank's
        counter ``notification_idx`` has reached ``value``. Raises if a rank
        on this host dies meanwhile."""
        self._wait_notify(notification_idx, value)
