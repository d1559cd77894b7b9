"""The calls table (python/onesided/window/_calls.py) is the one description of the
RMA calls: the Window's methods, the fast entries' parameter names and the
table in docs/porting.md come from it. These tests fail when any of them
says something the table does not."""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np

import onesided
from onesided import Window, _core
from onesided.window import _calls

ROOT = Path(__file__).resolve().parents[1]


def test_generated_methods_are_what_the_table_makes() -> None:
    committed = (ROOT / _calls.GENERATED).read_text()
    assert committed == _calls.module_source(), "run: python -m onesided.window --write"


def test_porting_table_is_what_the_table_makes() -> None:
    text = (ROOT / _calls.PORTING).read_text()
    assert _calls.with_porting_table(text) == text, "run: python -m onesided.window --write"


def test_every_call_is_a_method_with_the_tables_signature() -> None:
    for call in _calls.calls():
        method = getattr(Window, call.name)
        params = list(inspect.signature(method).parameters.values())[1:]
        assert [p.name for p in params] == [p.name for p in call.params], call.name
        for p, q in zip(params, call.params):
            assert (p.default is inspect.Parameter.empty) == (q.default is _calls.REQUIRED), (call.name, p)
            if q.default is not _calls.REQUIRED:
                assert p.default == q.default, (call.name, p)
        assert inspect.getdoc(method) == inspect.cleandoc(call.doc), call.name


def test_fast_entries_are_the_tables_calls() -> None:
    names = {c.name for c in _calls.calls()}
    assert set(_core.FAST_CALLS) <= names
    win = Window.Allocate(64, 8)
    try:
        for name in _core.FAST_CALLS:
            entry = getattr(win, name)
            assert entry.__name__ == name and inspect.cleandoc(entry.__doc__) == inspect.getdoc(getattr(Window, name))
        # A keyword the table names reaches the entry; a misspelt one is
        # Python's own TypeError from the full parse.
        win.Lock(0)
        win.Put(origin=np.ones(1, np.int64), target_rank=0, target=1)
        try:
            win.Put(origin=np.ones(1, np.int64), target_rnk=0)
        except TypeError as e:
            assert "target_rnk" in str(e) or "target_rank" in str(e)
        else:
            raise AssertionError("a misspelt keyword was accepted")
        win.Unlock(0)
        assert np.frombuffer(win, np.int64)[1] == 1
    finally:
        win.Free()


def test_adding_a_row_adds_its_forms() -> None:
    """Each operation has its R form; those with a notify_doc their two
    notified forms; nothing else."""
    names = [c.name for c in _calls.calls()]
    for op in _calls.OPERATIONS:
        assert op.name in names and _calls._request_name(op.name) in names
        assert (op.name + "_notify" in names) == bool(op.notify_doc)
    assert len(names) == len(set(names)) == 2 * len(_calls.OPERATIONS) + 2 * sum(
        1 for op in _calls.OPERATIONS if op.notify_doc)
    assert isinstance(onesided.Window.Rput.__doc__, str)
