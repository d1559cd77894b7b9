"""The Window's RMA methods. GENERATED from the calls table in
``onesided/window/_calls.py`` by ``python -m onesided.window --write``: do not
edit.

Each method is the full parse of its call: the instance's own fast entry
(cpp/bindings/fast_entries.hpp) takes plain arrays, int ranks and known ops,
and hands anything else here, with the arguments as the user gave them.
"""

from __future__ import annotations

from typing import Any

from . import _calls, _operations
from ._calls import RMW2_COMP_SWAP_EQ, RMW_SUM, SUM
from ._request import Request


class WindowCalls:
    """Put, Get, Accumulate, Get_accumulate, Fetch_and_op, Compare_and_swap,
    Rmw, Rmw2, their request-based forms and the notified ones."""

    def Put(self, origin: Any, target_rank: int, target: Any = None) -> None:
        """Write ``origin`` into the target's window. Not atomic, unordered;
        complete at the next flush, unlock or fence of ``target_rank``."""
        return _calls.plain(self, _operations.put, target_rank, origin, target)

    def Get(self, origin: Any, target_rank: int, target: Any = None) -> None:
        """Read the target's window into ``origin`` (written when the
        operation completes). Not atomic, unordered."""
        return _calls.plain(self, _operations.get, target_rank, origin, target)

    def Accumulate(self, origin: Any, target_rank: int, target: Any = None, op: Any = SUM) -> None:
        """target = op(target, origin), atomic per element, ordered with the
        other accumulate-style calls from this origin."""
        return _calls.plain(self, _operations.accumulate, target_rank, origin, target, op)

    def Get_accumulate(self, origin: Any, result: Any, target_rank: int, target: Any = None, op: Any = SUM) -> None:
        """result = target; target = op(target, origin), atomically per element.
        With op=NO_OP it is an atomic read and ``origin`` may be None."""
        return _calls.plain(self, _operations.get_accumulate, target_rank, origin, result, target, op)

    def Fetch_and_op(self, origin: Any, result: Any, target_rank: int, target_disp: int = 0, op: Any = SUM) -> None:
        """The one-element Get_accumulate: result = target; target = op(target, origin)."""
        return _calls.plain(self, _operations.fetch_and_op, target_rank, origin, result, target_disp, op)

    def Compare_and_swap(self, origin: Any, compare: Any, result: Any, target_rank: int, target_disp: int = 0) -> None:
        """result = target; if target == compare: target = origin. One element,
        atomic with every other accumulate-style call."""
        return _calls.plain(self, _operations.compare_and_swap, target_rank, origin, compare, result, target_disp)

    def Rmw(self, origin: Any, result: Any, target_rank: int, target_disp: int = 0, op: Any = RMW_SUM, assertion: int = 0) -> None:
        """Generalised read-modify-write (seed 002): per element, result =
        target, then target = op(target, origin). Ops: RMW_INC (origin may be
        None), RMW_SUM, RMW_PROD, RMW_MIN, RMW_MAX, RMW_LAND, RMW_LOR,
        RMW_LXOR, RMW_BAND, RMW_BOR, RMW_BXOR, RMW_SWAP. Each element is atomic
        with every accumulate-style call; the vector as a whole is not.
        Completes like the other RMA calls, or, with
        MODE_PASSIVE_EPOCH_IMPLICIT, before returning, inside its own
        exclusive lock epoch (no lock with MODE_NOCHECK as well)."""
        return _calls.plain(self, _operations.rmw, target_rank, origin, result, target_disp, op, assertion)

    def Rmw2(self, origin: Any, origin2: Any, result: Any, target_rank: int, target_disp: int = 0, op: Any = RMW2_COMP_SWAP_EQ, assertion: int = 0) -> None:
        """Two-operand read-modify-write: RMW2_MASK_SWAP (origin = mask,
        origin2 = value: target = (target & ~mask) | (value & mask)) and
        RMW2_COMP_SWAP_LT/_LE/_EQ/_GE/_GT/_NE (origin = comperand, origin2 =
        swaperand: when ``comperand OP target`` holds, target = swaperand).
        result receives the old values; same atomicity and completion as Rmw."""
        return _calls.plain(self, _operations.rmw2, target_rank, origin, origin2, result, target_disp, op, assertion)

    def Rput(self, origin: Any, target_rank: int, target: Any = None) -> Request:
        """Put returning a Request: complete (origin buffer reusable, data at
        the target) when the Request is, or at a flush/unlock of ``target_rank``."""
        return _calls.request(self, _operations.put, target_rank, origin, target)

    def Rget(self, origin: Any, target_rank: int, target: Any = None) -> Request:
        """Get returning a Request: ``origin`` holds the data once the Request completes."""
        return _calls.request(self, _operations.get, target_rank, origin, target)

    def Raccumulate(self, origin: Any, target_rank: int, target: Any = None, op: Any = SUM) -> Request:
        """Accumulate returning a Request; atomicity and ordering as Accumulate."""
        return _calls.request(self, _operations.accumulate, target_rank, origin, target, op)

    def Rget_accumulate(self, origin: Any, result: Any, target_rank: int, target: Any = None, op: Any = SUM) -> Request:
        """Get_accumulate returning a Request; ``result`` is valid once it completes."""
        return _calls.request(self, _operations.get_accumulate, target_rank, origin, result, target, op)

    def Rfetch_and_op(self, origin: Any, result: Any, target_rank: int, target_disp: int = 0, op: Any = SUM) -> Request:
        """Fetch_and_op returning a Request (an extension beyond MPI: MPI
        Forum issue #128). ``result`` is valid once the Request completes
        (Wait, Test, Waitall, ``await``, or a flush/unlock of
        ``target_rank``), not before; atomicity and ordering as Fetch_and_op.
        Arguments are checked as Fetch_and_op's, before anything is sent."""
        return _calls.request(self, _operations.fetch_and_op, target_rank, origin, result, target_disp, op)

    def Rcompare_and_swap(self, origin: Any, compare: Any, result: Any, target_rank: int, target_disp: int = 0) -> Request:
        """Compare_and_swap returning a Request (an extension beyond MPI:
        MPI Forum issue #128). ``result`` is valid once the Request
        completes, not before; atomicity as Compare_and_swap. Arguments are
        checked as Compare_and_swap's, before anything is sent."""
        return _calls.request(self, _operations.compare_and_swap, target_rank, origin, compare, result, target_disp)

    def Rrmw(self, origin: Any, result: Any, target_rank: int, target_disp: int = 0, op: Any = RMW_SUM, assertion: int = 0) -> Request:
        """Rmw returning a Request that completes with the operation."""
        return _calls.request(self, _operations.rmw, target_rank, origin, result, target_disp, op, assertion)

    def Rrmw2(self, origin: Any, origin2: Any, result: Any, target_rank: int, target_disp: int = 0, op: Any = RMW2_COMP_SWAP_EQ, assertion: int = 0) -> Request:
        """Rmw2 returning a Request that completes with the operation."""
        return _calls.request(self, _operations.rmw2, target_rank, origin, origin2, result, target_disp, op, assertion)

    def Put_notify(self, origin: Any, target_rank: int, target: Any = None, notification_idx: int = 0) -> None:
        """Put, then notify ``target_rank``'s counter ``notification_idx`` once
        the data is visible in its window (docs/semantics.md, notified RMA)."""
        return _calls.notified(self, _operations.put, target_rank, notification_idx, origin, target)

    def Rput_notify(self, origin: Any, target_rank: int, target: Any = None, notification_idx: int = 0) -> Request:
        """Put_notify returning a Request that completes once the data is at
        the target and the notification has been counted there."""
        return _calls.notified_request(self, _operations.put, target_rank, notification_idx, origin, target)

    def Get_notify(self, origin: Any, target_rank: int, target: Any = None, notification_idx: int = 0) -> None:
        """Get, then notify the target once its memory has been read (it may
        reuse it). ``origin`` holds the data once the operation completes."""
        return _calls.notified(self, _operations.get, target_rank, notification_idx, origin, target)

    def Rget_notify(self, origin: Any, target_rank: int, target: Any = None, notification_idx: int = 0) -> Request:
        """Get_notify returning a Request; ``origin`` is valid once it completes."""
        return _calls.notified_request(self, _operations.get, target_rank, notification_idx, origin, target)

    def Accumulate_notify(self, origin: Any, target_rank: int, target: Any = None, op: Any = SUM, notification_idx: int = 0) -> None:
        """Accumulate (atomic per element, ordered as Accumulate), then notify
        the target once it has been applied."""
        return _calls.notified(self, _operations.accumulate, target_rank, notification_idx, origin, target, op)

    def Raccumulate_notify(self, origin: Any, target_rank: int, target: Any = None, op: Any = SUM, notification_idx: int = 0) -> Request:
        """Accumulate_notify returning a Request."""
        return _calls.notified_request(self, _operations.accumulate, target_rank, notification_idx, origin, target, op)
