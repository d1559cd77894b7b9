"""The fast entries (cpp/bindings/fast_entries.hpp) and the direct forms of
the synchronisation calls (direct_forms.hpp): on every window the
instance's Put, Get, Accumulate, Get_accumulate, Fetch_and_op,
Compare_and_swap, Rmw, Rmw2 and the notified forms, and Lock, are C
functions bound to it (Flush and Unlock too where operations complete in
their call). Each call form must do what the class's method does: the same
memory afterwards, the same result, the same error. And there is one road:
what an entry does not take reaches the class's method, the full parse,
exactly once, and what it takes never does."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import onesided
from onesided import Window, _core
from onesided._types import dtype_code

RMA = list(_core.FAST_CALLS)
SYNC = ["Lock", "Flush", "Unlock"]


def test_bound_where_operations_complete_in_their_call() -> None:
    win = Window.Allocate(64, 8)
    slow = Window.Allocate(64, 8, info={"onesided_shared_memory": "off"})
    try:
        assert win._completes_in_call and not slow._completes_in_call
        for name in RMA + SYNC:
            assert type(getattr(win, name)).__name__ == "builtin_function_or_method", name
        for name in RMA + ["Lock"]:
            assert type(getattr(slow, name)).__name__ == "builtin_function_or_method", name
        for name in ["Flush", "Unlock"]:
            assert type(getattr(slow, name)).__name__ == "method", name
    finally:
        win.Free()
        slow.Free()
    # Free drops them: the class's methods answer (and raise) afterwards.
    assert all(type(getattr(win, name)).__name__ == "method" for name in RMA + SYNC)


i8 = np.int64


def primed(layout: onesided.Layout) -> onesided.Layout:
    """A Layout whose core layout for int64 is built, as the first call with
    it builds it: only then do the fast entries take it."""
    layout.to_core(dtype_code(i8), 8)
    return layout


EVERY_OTHER = primed(onesided.Layout(3, (2,)))  # elements 0, 2, 4 from the displacement
EVERY_THIRD = primed(onesided.Layout(2, (3,)))
INT64_EVERY_OTHER = primed(onesided.Layout(3, (2,), dtype=i8))
TWICE_THE_SAME = primed(onesided.Layout(2, (0,)))  # overlaps itself: refused as a target
CALLS: list[tuple[str, Callable[[Any, np.ndarray], Any]]] = [
    ("Put positional", lambda w, r: w.Put(np.array([5, 6], i8), 0, 1)),
    ("Put no target", lambda w, r: w.Put(np.array([7], i8), 0)),
    ("Put target None", lambda w, r: w.Put(np.array([7], i8), 0, None)),
    ("Put keywords", lambda w, r: w.Put(origin=np.array([8], i8), target_rank=0, target=3)),
    ("Put numpy target", lambda w, r: w.Put(np.array([9, 9], i8), np.int32(0), np.int64(2))),
    ("Get", lambda w, r: w.Get(r, 0, 1)),
    ("Get keywords", lambda w, r: w.Get(target=2, origin=r, target_rank=0)),
    ("Accumulate default op", lambda w, r: w.Accumulate(np.array([3, 4], i8), 0, 1)),
    ("Accumulate op keyword", lambda w, r: w.Accumulate(np.array([3], i8), 0, op=onesided.MAX)),
    ("Accumulate op positional", lambda w, r: w.Accumulate(np.array([3], i8), 0, 2, onesided.PROD)),
    ("Get_accumulate", lambda w, r: w.Get_accumulate(np.array([1, 1], i8), r, 0, 1)),
    ("Get_accumulate NO_OP", lambda w, r: w.Get_accumulate(None, r, 0, op=onesided.NO_OP)),
    ("Fetch_and_op", lambda w, r: w.Fetch_and_op(np.array([2], i8), r[:1], 0, 3)),
    ("Fetch_and_op keywords", lambda w, r: w.Fetch_and_op(np.array([2], i8), r[:1], 0, op=onesided.MIN,
                                                         target_disp=1)),
    ("Compare_and_swap", lambda w, r: w.Compare_and_swap(np.array([9], i8), np.array([0], i8), r[:1], 0, 4)),
    ("Compare_and_swap keywords", lambda w, r: w.Compare_and_swap(result=r[:1], compare=np.array([1], i8),
                                                                 origin=np.array([4], i8), target_rank=0)),
    ("Flush", lambda w, r: w.Flush(0)),
    ("Flush PROC_NULL", lambda w, r: w.Flush(onesided.PROC_NULL)),
    ("Put PROC_NULL", lambda w, r: w.Put(np.array([1], i8), onesided.PROC_NULL)),
    ("Rmw", lambda w, r: w.Rmw(np.array([1, 2], i8), r, 0, 1)),
    ("Rmw INC no origin", lambda w, r: w.Rmw(None, r, 0, 2, onesided.RMW_INC)),
    ("Rmw assertion 0 keyword", lambda w, r: w.Rmw(np.array([1, 2], i8), r, 0, assertion=0)),
    ("Rmw2", lambda w, r: w.Rmw2(np.array([11, 12], i8), np.array([5, 6], i8), r, 0, 1)),
    ("Rmw2 keywords", lambda w, r: w.Rmw2(origin2=np.array([5], i8), origin=np.array([10], i8), result=r[:1],
                                          target_rank=0, op=onesided.RMW2_COMP_SWAP_NE)),
    ("Rmw implicit epoch", lambda w, r: w.Rmw(np.array([1], i8), r[:1], 0, 0, onesided.RMW_SUM,
                                              onesided.MODE_PASSIVE_EPOCH_IMPLICIT)),
    # Strided views and Layout targets (the strided fast entries).
    ("Put strided view", lambda w, r: w.Put(np.arange(6, dtype=i8)[::2], 0, 1)),
    ("Put reversed view", lambda w, r: w.Put(np.arange(4, dtype=i8)[::-1], 0, 2)),
    ("Put 2-d view", lambda w, r: w.Put(np.arange(12, dtype=i8).reshape(3, 4)[:, 1:3], 0, 1)),
    ("Put Layout target", lambda w, r: w.Put(np.array([1, 2, 3], i8), 0, (1, 1, EVERY_OTHER))),
    ("Put Layout count None", lambda w, r: w.Put(np.array([1, 2, 3], i8), 0, (0, None, EVERY_OTHER))),
    ("Put Layout count of elements", lambda w, r: w.Put(np.array([1, 2, 3], i8), 0, (2, 3, EVERY_OTHER))),
    ("Put Layout alone", lambda w, r: w.Put(np.array([4, 5, 6], i8), 0, EVERY_OTHER)),
    ("Put view to Layout", lambda w, r: w.Put(np.arange(6, dtype=i8)[::-2], 0, (1, 1, EVERY_OTHER))),
    ("Get reversed view", lambda w, r: w.Get(r[::-1], 0, 1)),
    ("Get Layout target", lambda w, r: w.Get(r, 0, (1, 1, EVERY_THIRD))),
    ("Accumulate view to Layout", lambda w, r: w.Accumulate(np.arange(6, dtype=i8)[::3], 0, (0, 1, EVERY_THIRD),
                                                            onesided.SUM)),
    # Errors: the class's method raises them, whichever form was called.
    ("Put Layout outside", lambda w, r: w.Put(np.array([1, 2, 3], i8), 0, (4, 1, EVERY_OTHER))),
    ("Put Layout count wrong", lambda w, r: w.Put(np.array([1, 2, 3], i8), 0, (0, 2, EVERY_OTHER))),
    ("Put Layout elements wrong", lambda w, r: w.Put(np.array([1, 2], i8), 0, (0, 1, EVERY_OTHER))),
    ("Put Layout overlapping", lambda w, r: w.Put(np.array([1, 2], i8), 0, (0, 1, TWICE_THE_SAME))),
    ("Put Layout other dtype", lambda w, r: w.Put(np.array([1, 2, 3], np.int32), 0, (0, 1, INT64_EVERY_OTHER))),
    ("Get read-only view", lambda w, r: w.Get(np.lib.stride_tricks.as_strided(r, (2,), (0,)), 0, 1)),
    ("Put view outside", lambda w, r: w.Put(np.arange(8, dtype=i8)[::2], 0, 6)),
    ("Put missing rank", lambda w, r: w.Put(np.array([1], i8))),
    ("Put unknown keyword", lambda w, r: w.Put(np.array([1], i8), 0, bogus=1)),
    ("Put too many", lambda w, r: w.Put(np.array([1], i8), 0, 0, 0)),
    ("Put twice origin", lambda w, r: w.Put(np.array([1], i8), 0, origin=np.array([1], i8))),
    ("Put bad rank", lambda w, r: w.Put(np.array([1], i8), 5)),
    ("Put float target", lambda w, r: w.Put(np.array([1], i8), 0, 1.0)),
    ("Put outside", lambda w, r: w.Put(np.array([1, 2], i8), 0, 7)),
    ("Fetch_and_op None disp", lambda w, r: w.Fetch_and_op(np.array([1], i8), r[:1], 0, None)),
    ("Accumulate op None", lambda w, r: w.Accumulate(np.array([1], i8), 0, op=None)),
    ("Accumulate int op", lambda w, r: w.Accumulate(np.array([1], i8), 0, 0, 1)),
    ("Compare_and_swap two elements", lambda w, r: w.Compare_and_swap(np.array([1, 1], i8), np.array([1, 1], i8),
                                                                      r, 0)),
    ("Flush bad rank", lambda w, r: w.Flush(3)),
    ("Flush no rank", lambda w, r: w.Flush()),
    ("Flush bool rank", lambda w, r: w.Flush(True)),
    ("Put bool rank", lambda w, r: w.Put(np.array([1], i8), False)),
]


def run(call: Callable[[Any, np.ndarray], Any], direct: bool) -> tuple[Any, list[int], list[int]]:
    """The call on a fresh 1-rank window holding 10, 11, ..., 17, inside
    Lock_all; through the instance (direct) or the class's methods."""
    win = Window.Allocate(64, 8)
    try:
        mem = np.frombuffer(win, i8)
        mem[:] = np.arange(10, 18)
        result = np.full(2, -1, i8)
        target: Any = win
        if not direct:
            # The class's methods, as a window without direct forms calls them.
            class Plain:
                def __getattr__(self, name: str) -> Any:
                    return getattr(type(win), name).__get__(win)

            target = Plain()
        win.Lock_all()
        try:
            call(target, result)
            outcome: Any = "ok"
        except Exception as e:  # compared below
            outcome = (type(e), str(e))
        win.Unlock_all()
        return outcome, mem.tolist(), result.tolist()
    finally:
        win.Free()


TYPE_ERRORS = {"Put missing rank", "Put unknown keyword", "Put too many", "Put twice origin", "Flush no rank"}
ONESIDED_ERRORS = {"Put bad rank", "Put float target", "Put outside", "Fetch_and_op None disp", "Accumulate op None",
                   "Accumulate int op", "Compare_and_swap two elements", "Flush bad rank", "Flush bool rank",
                   "Put bool rank", "Rmw implicit epoch", "Put Layout outside", "Put Layout count wrong",
                   "Put Layout elements wrong", "Put Layout overlapping", "Put Layout other dtype",
                   "Get read-only view", "Put view outside"}


@pytest.mark.parametrize("name, call", CALLS, ids=[c[0] for c in CALLS])
def test_direct_form_does_what_the_method_does(name: str, call: Callable[[Any, np.ndarray], Any]) -> None:
    direct, method = run(call, True), run(call, False)
    assert direct == method, (name, direct, method)
    if name in TYPE_ERRORS:
        assert direct[0][0] is TypeError, direct
    elif name in ONESIDED_ERRORS:
        assert issubclass(direct[0][0], onesided.Error), direct
        assert direct[1] == list(range(10, 18)), "an error changed the window"
    else:
        assert direct[0] == "ok", direct


def test_lock_forms() -> None:
    win = Window.Allocate(64, 8)
    try:
        win.Lock(0)
        win.Unlock(0)
        win.Lock(0, lock_type=onesided.LOCK_SHARED)
        win.Unlock(rank=0)
        win.Lock(rank=0, assertion=onesided.MODE_NOCHECK)
        win.Unlock(0)
        for bad, cls in ((lambda: win.Lock(3), onesided.ArgumentError), (lambda: win.Lock(0, 99), onesided.ArgumentError),
                         (lambda: win.Unlock(0), onesided.EpochError), (lambda: win.Lock(), TypeError)):
            with pytest.raises(cls):
                bad()
    finally:
        win.Free()


class Spy(Window):
    """A Window whose class methods count their calls: the fast entries hand
    what they do not take to ``type(win).<name>``."""

    full_parses: list[str] = []

    def Put(self, *args: Any, **kwargs: Any) -> None:
        Spy.full_parses.append("Put")
        super().Put(*args, **kwargs)

    def Put_notify(self, *args: Any, **kwargs: Any) -> None:
        Spy.full_parses.append("Put_notify")
        super().Put_notify(*args, **kwargs)

    def Lock(self, *args: Any, **kwargs: Any) -> None:
        Spy.full_parses.append("Lock")
        super().Lock(*args, **kwargs)


@pytest.mark.parametrize("info", [{"onesided_notifications": "1"},
                                  {"onesided_notifications": "1", "onesided_shared_memory": "off"}],
                         ids=["inline", "holding"])
def test_one_road(info: dict[str, str]) -> None:
    win = Spy.Allocate(64, 8, info=info)
    try:
        plain = np.array([1], i8)
        win.Lock(0)
        win.Put(plain, 0, 1)
        win.Put_notify(plain, 0, 2, 0)
        # Strided views and built Layouts too (a new Layout is built by the
        # full parse once per dtype, then taken).
        win.Put(np.arange(4, dtype=i8)[::2], 0, 5)
        win.Put(np.arange(6, dtype=i8)[1::2], 0, (1, 1, EVERY_OTHER))
        win.Put_notify(np.arange(4, dtype=i8)[::-2], 0, 5, 0)
        assert Spy.full_parses == []  # the fast entries took them
        fresh = onesided.Layout(2, (1,))
        win.Put(np.arange(2, dtype=i8), 0, (5, 1, fresh))
        win.Put(np.arange(2, dtype=i8), 0, (5, 1, fresh))
        assert Spy.full_parses == ["Put"]
        Spy.full_parses.clear()
        win.Put([plain, 1, np.int64], 0, (3, 1, np.int64))
        win.Put(plain, onesided.PROC_NULL, None)
        win.Put_notify([plain, np.int64], 0, 4)
        with pytest.raises(onesided.ArgumentTypeError):
            win.Put([1, 2], 0)
        win.Unlock(0)
        with pytest.raises(onesided.ArgumentError):
            win.Lock(0, 77)
        # Each call the entries refused reached the full parse exactly once.
        assert Spy.full_parses == ["Put", "Put_notify", "Put", "Lock"]
        win.Lock(0)
        win.Flush(0)
        assert np.frombuffer(win, i8)[:5].tolist() == [0, 1, 1, 1, 1]
        win.Unlock(0)
    finally:
        Spy.full_parses.clear()
        win.Free()
