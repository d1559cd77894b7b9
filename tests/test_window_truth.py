"""A window's truth value (issue 13): true while usable; false once freed
(as MPI.Win after Free), for the null window, and for a window no
constructor ran (Window.__new__(Window)), which raises on every method."""

from __future__ import annotations

import pytest

import onesided
from onesided import Window


def test_a_window_no_constructor_ran_is_false_and_stays_unusable() -> None:
    win = Window.__new__(Window)
    assert bool(win) is False
    assert not win
    with pytest.raises(onesided.Error, match="never created"):
        win.Fence()
    with pytest.raises(onesided.Error, match="never created"):
        win.free()
    assert bool(win) is False


def test_a_created_window_is_true_until_freed() -> None:
    win = Window.Allocate(8)
    assert bool(win) is True
    win.Free()
    assert bool(win) is False
    assert bool(Window()) is False


def test_repr_of_a_window_no_constructor_ran_says_so() -> None:
    win = Window.__new__(Window)
    assert repr(win) == "<onesided.Window (not created)>"
    assert str(win) == "<onesided.Window (not created)>"


def test_repr_of_a_created_window_and_a_freed_one_names_the_window() -> None:
    win = Window.Allocate(8)
    text = repr(win)
    assert text.startswith("<onesided.Window allocate rank 0/1 8 B"), text
    win.Free()
    assert repr(win).startswith("<onesided.Window allocate rank 0/1"), repr(win)
