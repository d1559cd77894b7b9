"""The direct forms (cpp/bindings/direct_forms.hpp): on windows whose
operations complete in their call, the instance's Put, Get, Accumulate,
Get_accumulate, Fetch_and_op, Compare_and_swap, Flush and Unlock (and Lock
on every window) are C functions bound to it. Each call form must do what
the class's method does: the same memory afterwards, the same result, the
same error."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import onesided
from onesided import Window, _core

RMA = list(_core.DIRECT_FORMS)
SYNC = ["Lock", "Flush", "Unlock"]


def test_bound_where_operations_complete_in_their_call() -> None:
    win = Window.Allocate(64, 8)
    slow = Window.Allocate(64, 8, info={"onesided_shared_memory": "off"})
    try:
        assert win._completes_in_call and not slow._completes_in_call
        for name in RMA + SYNC:
            assert type(getattr(win, name)).__name__ == "builtin_function_or_method", name
        for name in RMA + ["Flush", "Unlock"]:
            assert type(getattr(slow, name)).__name__ == "method", name
        assert type(slow.Lock).__name__ == "builtin_function_or_method"
    finally:
        win.Free()
        slow.Free()
    # Free drops them: the class's methods answer (and raise) afterwards.
    assert all(type(getattr(win, name)).__name__ == "method" for name in RMA + SYNC)


i8 = np.int64
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
    # Errors: the class's method raises them, whichever form was called.
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
                   "Put bool rank"}


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
