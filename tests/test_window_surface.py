"""The rest of mpi4py's ``MPI.Win`` surface on a window over onesided's own
COMM_WORLD (a world of one here), where onesided answers with its own
objects: Info, Group, buffer and constants. The side-by-side comparison with
MPI.Win over mpi4py communicators is tests/test_conformance.py."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import onesided
from onesided import Window


@pytest.fixture
def win():
    w = Window.Allocate(16, disp_unit=4)
    yield w
    w.free()


def test_info_is_a_dict_with_mpi_info_methods(win: Window) -> None:
    info = win.Get_info()
    assert isinstance(info, dict) and isinstance(info, onesided.Info)
    assert info.Get("accumulate_ordering") == info["accumulate_ordering"] == "rar,raw,war,waw"
    assert info.Get("no_such_key") is None
    assert info.Get_nkeys() == len(info)
    info.Free()
    win.Set_info({"no_locks": "true"})  # accepted, hints fixed at creation
    win.info = onesided.Info()
    assert win.info["accumulate_ordering"] == "rar,raw,war,waw"


def test_group(win: Window) -> None:
    g = win.Get_group()
    assert isinstance(g, onesided.Group)
    assert (g.Get_size(), g.Get_rank(), list(g)) == (1, 0, [0])
    assert win.group.size == 1 and win.group.rank == 0
    g.Free()
    # A group from Get_group is what Post/Start take.
    win.Post(win.Get_group())
    win.Start(win.Get_group().Incl([0]))
    win.Complete()
    assert win.Wait() is True


def test_attributes(win: Window) -> None:
    assert win.Get_attr(onesided.WIN_BASE) == win.attrs[0] != 0
    assert win.Get_attr(onesided.WIN_SIZE) == 16
    assert win.Get_attr(onesided.WIN_DISP_UNIT) == 4
    assert win.Get_attr(onesided.WIN_CREATE_FLAVOR) == win.flavor == onesided.FLAVOR_ALLOCATE
    assert win.Get_attr(onesided.WIN_MODEL) == win.model == onesided.WIN_UNIFIED
    deleted = []
    key = Window.Create_keyval(delete_fn=lambda w, k, v: deleted.append(v))
    assert win.Get_attr(key) is None
    win.Set_attr(key, "a")
    win.Set_attr(key, "b")  # replaces: "a" is deleted
    assert win.Get_attr(key) == "b" and deleted == ["a"]
    win.Delete_attr(key)
    assert win.Get_attr(key) is None and deleted == ["a", "b"]
    win.Set_attr(key, "c")
    win.Free()  # delete callbacks run at Free
    assert deleted == ["a", "b", "c"]
    Window.Free_keyval(key)
    with pytest.raises(onesided.ArgumentError):
        Window.Free_keyval(key)
    with Window.Allocate(8) as other, pytest.raises(onesided.ArgumentError):
        other.Get_attr(12345)


def test_dynamic_base_is_zero() -> None:
    with Window.Create_dynamic() as w:
        assert (w.Get_attr(onesided.WIN_BASE), w.Get_attr(onesided.WIN_SIZE)) == (0, 0)
        assert w.tomemory().address == 0 and len(w.tomemory()) == 0


def test_create_none_is_bottom() -> None:
    with Window.Create(None) as w:
        assert w.attrs == (0, 0, 1)


def test_tomemory_like_mpi_buffer(win: Window) -> None:
    m = win.tomemory()
    assert isinstance(m, onesided.buffer)
    np.frombuffer(win, np.int32)[:] = 7
    m[:] = 0
    assert np.frombuffer(win, np.int32).tolist() == [0, 0, 0, 0]
    m[0:4] = b"\x01\x02\x03\x04"
    assert bytes(m[0:5]) == b"\x01\x02\x03\x04\x00"
    assert (len(m), m.nbytes, m.address, m.obj, m.readonly) == (16, 16, win.attrs[0], win, False)
    assert memoryview(m).cast("i")[0] == 0x04030201 == m.cast("i")[0]
    assert m.toreadonly().readonly


def test_name(win: Window) -> None:
    assert win.Get_name() == win.name == ""
    win.Set_name("w")
    assert win.name == "w"
    win.name = "v"
    assert win.Get_name() == "v"


def test_lifetime_and_null_window() -> None:
    w = Window.Allocate(8)
    assert w and Window(w) is w
    w.free()
    assert not w
    w.free()  # no-op
    with pytest.raises(onesided.EpochError):
        w.Free()
    null = Window()
    assert not null and null == onesided.WIN_NULL and isinstance(null, Window)
    null.free()
    with pytest.raises(onesided.EpochError):
        null.Fence()


def test_pickle_raises_value_error(win: Window) -> None:
    with pytest.raises(ValueError):
        pickle.dumps(win)


def test_error_handlers_and_handles(win: Window) -> None:
    win.Set_errhandler(None)  # accepted, ignored: errors are exceptions
    with pytest.raises(NotImplementedError):
        Window.Create_errhandler(lambda w, code: None)
    with pytest.raises(NotImplementedError):
        win.Call_errhandler(1)
    for call in (lambda: win.handle, win.toint, win.py2f, lambda: Window.fromhandle(1),
                 lambda: Window.fromint(1), lambda: Window.f2py(1)):
        with pytest.raises(NotImplementedError):
            call()


def test_proc_null_everywhere(win: Window) -> None:
    P = onesided.PROC_NULL
    win.Lock(P)
    win.Put(None, P)
    win.Get(None, P)
    win.Accumulate(None, P)
    win.Get_accumulate(None, None, P)
    for req in (win.Rput(None, P), win.Rget(None, P), win.Raccumulate(None, P),
                win.Rget_accumulate(None, None, P)):
        assert not req and req.Wait() is True and req.Test() is True
    win.Flush(P)
    win.Flush_local(P)
    win.Unlock(P)


def test_requests(win: Window) -> None:
    win.Lock_all()
    a = np.arange(4, dtype=np.int32)
    b = np.zeros(4, np.int32)
    reqs = [win.Rput(a, 0), win.Rget(b, 0)]
    assert onesided.Request.Waitall(reqs) is True
    assert not any(reqs)
    win.Flush(0)
    req = win.Rget(b, 0)
    while not onesided.Request.Testall([req]):
        pass
    assert onesided.Request.Waitany([req]) == -32766  # none active
    win.Unlock_all()
    assert b.tolist() == [0, 1, 2, 3]


def test_a_foreign_proc_null_takes_the_full_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Open MPI's MPI.PROC_NULL is -2, not onesided's -1: a plain-array call
    with it must still be a no-op (the shortcut hands it to the full path,
    which translates it), not an error and not a write."""
    import sys
    import types

    win = onesided.Window.Allocate(16, disp_unit=8)
    before = bytes(win.tomemory())
    # An mpi4py whose PROC_NULL is Open MPI's, seen by the argument parsing.
    monkeypatch.setitem(sys.modules, "mpi4py.MPI", types.SimpleNamespace(PROC_NULL=-2))
    with win.lock_all():
        win.Put(np.ones(2, np.int64), -2)
        win.Accumulate(np.ones(2, np.int64), -2)
        res = np.full(1, 7, np.int64)
        win.Fetch_and_op(np.ones(1, np.int64), res, -2)
    assert bytes(win.tomemory()) == before and res[0] == 7
    win.Free()
