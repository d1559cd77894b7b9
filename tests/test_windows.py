"""Shared and dynamic windows, active target (PSCW), request-based ops and
epoch misuse (issue 4): on real ranks through tests/ranks/windows.py, and in
one process (a world of size 1) where no other rank is needed."""

from __future__ import annotations

import numpy as np
import pytest

import onesided
from conftest import PROVIDERS, provider_id, run_ranks
from onesided import Window

NASTY = {"off": {}, "on": {"ONESIDED_NASTY": "4242"}}


def env(nasty: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    if nasty == "off":
        monkeypatch.delenv("ONESIDED_NASTY", raising=False)
    return NASTY[nasty]


@pytest.mark.parametrize("layout", ["contig", "noncontig"])
@pytest.mark.parametrize("provider", PROVIDERS, ids=provider_id)
def test_shared_window(provider: str, layout: str) -> None:
    out = run_ranks("windows.py", 4, "shared", layout, provider=provider, timeout=60)
    assert "PASS shared" in out.stdout


def test_shared_window_under_mpiexec() -> None:
    """mpi4py's COMM_WORLD as the group, and MPI.PROC_NULL in Shared_query."""
    out = run_ranks("windows.py", 4, "shared", "contig", launcher="mpiexec", provider="shm", timeout=60)
    assert "PASS shared" in out.stdout


@pytest.mark.parametrize("nasty", ["off", "on"])
@pytest.mark.parametrize("provider", PROVIDERS, ids=provider_id)
def test_dynamic_window(provider: str, nasty: str, monkeypatch: pytest.MonkeyPatch) -> None:
    out = run_ranks("windows.py", 3, "dynamic", provider=provider, env=env(nasty, monkeypatch), timeout=60)
    assert "PASS dynamic" in out.stdout


@pytest.mark.parametrize("nasty", ["off", "on"])
@pytest.mark.parametrize("provider", PROVIDERS, ids=provider_id)
def test_pscw_ring_start_before_post(provider: str, nasty: str, monkeypatch: pytest.MonkeyPatch) -> None:
    out = run_ranks("windows.py", 4, "pscw", provider=provider, env=env(nasty, monkeypatch), timeout=60)
    assert "PASS pscw" in out.stdout


@pytest.mark.parametrize("provider", PROVIDERS, ids=provider_id)
def test_pscw_with_mpi4py_groups_under_mpiexec(provider: str) -> None:
    """Groups given as MPI.Group of COMM_WORLD over a window whose
    communicator numbers the ranks in reverse."""
    out = run_ranks("windows.py", 4, "pscw", launcher="mpiexec", provider=provider, timeout=60)
    assert "PASS pscw" in out.stdout


@pytest.mark.parametrize("nasty", ["off", "on"])
@pytest.mark.parametrize("provider", PROVIDERS, ids=provider_id)
def test_pscw_test_is_a_nonblocking_wait(provider: str, nasty: str, monkeypatch: pytest.MonkeyPatch) -> None:
    out = run_ranks("windows.py", 2, "pscw_test", provider=provider, env=env(nasty, monkeypatch), timeout=60)
    assert "PASS pscw_test" in out.stdout


@pytest.mark.parametrize("nasty", ["off", "on"])
@pytest.mark.parametrize("provider", PROVIDERS, ids=provider_id)
def test_request_based_ops(provider: str, nasty: str, monkeypatch: pytest.MonkeyPatch) -> None:
    out = run_ranks("windows.py", 3, "requests", provider=provider, env=env(nasty, monkeypatch), timeout=60)
    assert "PASS requests" in out.stdout


@pytest.mark.parametrize("provider", PROVIDERS, ids=provider_id)
def test_epoch_misuse_on_two_ranks(provider: str) -> None:
    out = run_ranks("windows.py", 2, "misuse", provider=provider, timeout=60)
    assert "PASS misuse" in out.stdout


def test_epoch_misuse_under_mpiexec() -> None:
    out = run_ranks("windows.py", 2, "misuse", launcher="mpiexec", provider="shm", timeout=60)
    assert "PASS misuse" in out.stdout


# -- in one process (a world of size 1) ----------------------------------------


@pytest.fixture
def win():
    w = Window.Allocate(64, disp_unit=8, info={"provider": "shm"})
    yield w
    try:
        w.Free()
    except onesided.EpochError:
        pass


def still_works(w: Window) -> None:
    """A full passive epoch after the misuse: Put, Flush, Get round trip."""
    data, back = np.arange(7, 15, dtype=np.int64), np.zeros(8, np.int64)
    with w.lock(0):
        w.Put(data, 0)
        w.Flush(0)
        w.Get(back, 0)
    assert list(back) == list(data)


def test_shared_window_in_one_process() -> None:
    """A world of 1: Shared_query(0) and Shared_query(PROC_NULL) are the
    window's own zeroed memory; RMA and direct loads/stores agree."""
    w = Window.Allocate_shared(80, disp_unit=8, info={"provider": "shm"})
    assert w.flavor == onesided.FLAVOR_SHARED and w.model == onesided.WIN_UNIFIED
    for r in (0, onesided.PROC_NULL):
        buf, du = w.Shared_query(r)
        assert (buf.nbytes, du, buf.readonly) == (80, 8, False)
        assert onesided.Get_address(buf) == w.attrs[0] == np.frombuffer(w, np.uint8).ctypes.data
    seg = np.frombuffer(w.Shared_query(0)[0], np.int64)
    assert (seg == 0).all()
    seg[3] = 33
    w.Sync()
    got = np.zeros(1, np.int64)
    with w.lock(0):
        w.Get(got, 0, 3)
        w.Flush(0)
        w.Put(np.array([44], np.int64), 0, 4)
    w.Sync()
    assert got[0] == 33 and seg[4] == 44
    w.Free()


def test_noncontiguous_shared_window_is_page_aligned() -> None:
    w = Window.Allocate_shared(24, disp_unit=4, info={"provider": "shm", "alloc_shared_noncontig": "true"})
    buf, du = w.Shared_query(0)
    assert (buf.nbytes, du) == (24, 4) and onesided.Get_address(buf) % 4096 == 0
    w.Free()


def test_dynamic_window_in_one_process() -> None:
    """Attach two arrays; ops by absolute address land in the right one;
    ranges straddling an end, detached and never-attached memory raise
    BoundsError and write nothing."""
    w = Window.Create_dynamic(info={"provider": "shm"})
    assert w.flavor == onesided.FLAVOR_DYNAMIC
    a, b, never = np.zeros(4, np.int64), np.zeros(6, np.int64), np.zeros(2, np.int64)
    w.Attach(a)
    w.Attach(b)
    assert onesided.Get_address(b[2:]) == b.ctypes.data + 16
    with w.lock(0):
        w.Accumulate(np.ones(4, np.int64), 0, onesided.Get_address(a))
        w.Put(np.array([9, 8], np.int64), 0, onesided.Get_address(b[4:]))
        with pytest.raises(onesided.BoundsError):
            w.Put(np.ones(2, np.int64), 0, onesided.Get_address(a[3:]))  # straddles a's end
        with pytest.raises(onesided.BoundsError):
            w.Put(np.ones(1, np.int64), 0, onesided.Get_address(never))
        w.Accumulate(np.ones(1, np.int64), 0, onesided.Get_address(a[3:]))  # the last element
    assert list(a) == [1, 1, 1, 2] and list(b) == [0, 0, 0, 0, 9, 8] and list(never) == [0, 0]
    w.Detach(b)
    with w.lock(0):
        with pytest.raises(onesided.BoundsError):
            w.Get(np.zeros(1, np.int64), 0, onesided.Get_address(b))
        w.Accumulate(np.ones(1, np.int64), 0, onesided.Get_address(a))
    assert a[0] == 2 and list(b) == [0, 0, 0, 0, 9, 8]
    with pytest.raises(onesided.Error):
        ro = np.zeros(2, np.int64)
        ro.flags.writeable = False
        w.Attach(ro)
    w.Free()


def test_pscw_with_itself(win: Window) -> None:
    """Post and Start naming only itself: a legal PSCW round; Test is True
    once and then the exposure epoch is over."""
    mem = np.frombuffer(win, np.int64)
    win.Post([0])
    win.Start([0])
    win.Put(np.array([5], np.int64), 0, 1)
    win.Complete()
    while not win.Test():
        pass
    assert mem[1] == 5
    with pytest.raises(onesided.EpochError):
        win.Test()
    win.Post(range(1))
    win.Start((0,))
    win.Accumulate(np.array([2], np.int64), 0, 1)
    win.Complete()
    win.Wait()
    assert mem[1] == 7
    still_works(win)


def test_request_ops_in_one_process(win: Window) -> None:
    mem = np.frombuffer(win, np.int64)
    mem[:] = np.arange(8)
    got, fetched = np.zeros(3, np.int64), np.zeros(1, np.int64)
    win.Lock(0)
    r1 = win.Rget(got, 0, 2)
    r2 = win.Rput(np.array([-1], np.int64), 0, 7)
    r3 = win.Raccumulate(np.array([10], np.int64), 0, 0)
    r4 = win.Rget_accumulate(np.array([1], np.int64), fetched, 0, 0, onesided.SUM)
    r1.Wait()
    assert list(got) == [2, 3, 4]
    onesided.Request.Waitall([r2, r3, r4])
    assert fetched[0] == 10 and mem[7] == -1 and mem[0] == 11
    r5 = win.Raccumulate(np.array([1], np.int64), 0, 1)
    win.Unlock(0)
    assert all(r.Test() is True for r in (r1, r2, r3, r4, r5))
    assert mem[1] == 2


ONE = np.ones(1, np.int64)
RES = np.zeros(1, np.int64)
OPS = {
    "Put": lambda w: w.Put(ONE, 0, 1),
    "Get": lambda w: w.Get(RES, 0, 1),
    "Accumulate": lambda w: w.Accumulate(ONE, 0, 1),
    "Get_accumulate": lambda w: w.Get_accumulate(ONE, RES, 0, 1),
    "Fetch_and_op": lambda w: w.Fetch_and_op(ONE, RES, 0, 1),
    "Compare_and_swap": lambda w: w.Compare_and_swap(ONE, ONE, RES, 0, 1),
    "Rput": lambda w: w.Rput(ONE, 0, 1),
    "Rget": lambda w: w.Rget(RES, 0, 1),
    "Raccumulate": lambda w: w.Raccumulate(ONE, 0, 1),
    "Rget_accumulate": lambda w: w.Rget_accumulate(ONE, RES, 0, 1),
}


@pytest.mark.parametrize("op", list(OPS))
def test_op_outside_any_epoch(win: Window, op: str) -> None:
    with pytest.raises(onesided.EpochError, match="outside"):
        OPS[op](win)
    still_works(win)


@pytest.mark.parametrize("op", ["Put", "Accumulate", "Rget"])
def test_op_in_an_exposure_epoch_only(win: Window, op: str) -> None:
    """Post opens an exposure epoch, not an access epoch."""
    win.Post([0])
    with pytest.raises(onesided.EpochError):
        OPS[op](win)
    win.Start([0])
    win.Complete()
    win.Wait()
    still_works(win)


def test_complete_wait_test_without_their_epoch(win: Window) -> None:
    for call in (win.Complete, win.Wait, win.Test):
        with pytest.raises(onesided.EpochError):
            call()
    still_works(win)


@pytest.mark.parametrize("second", ["Lock", "Lock_all"])
def test_lock_inside_a_used_fence_epoch(win: Window, second: str) -> None:
    win.Fence()
    win.Put(ONE, 0, 1)
    with pytest.raises(onesided.EpochError, match="fence epoch"):
        win.Lock(0) if second == "Lock" else win.Lock_all()
    win.Fence(onesided.MODE_NOSUCCEED)
    still_works(win)


def _open(w: Window, kind: str) -> None:
    if kind == "Lock":
        w.Lock(0)
    elif kind == "Lock_all":
        w.Lock_all()
    elif kind == "Start":
        w.Post([0])  # so that Complete can finish
        w.Start([0])
    else:
        w.Post([0])


def _close(w: Window, kind: str) -> None:
    if kind == "Lock":
        w.Unlock(0)
    elif kind == "Lock_all":
        w.Unlock_all()
    elif kind == "Start":
        w.Complete()
        w.Wait()
    else:
        w.Start([0])
        w.Complete()
        w.Wait()


NESTED = [  # (open epoch, misuse)
    ("Lock", "Lock"),
    ("Lock_all", "Lock_all"),
    ("Lock_all", "Lock"),
    ("Start", "Start"),
    ("Post", "Post"),
    ("Lock_all", "Start"),
    ("Start", "Lock"),
    ("Lock", "Fence"),
    ("Start", "Fence"),
    ("Lock", "Free"),
    ("Lock_all", "Free"),
    ("Start", "Free"),
    ("Post", "Free"),
]


@pytest.mark.parametrize("epoch, misuse", NESTED, ids=[f"{m}-inside-{e}" for e, m in NESTED])
def test_nested_epochs_and_misplaced_calls(win: Window, epoch: str, misuse: str) -> None:
    _open(win, epoch)
    with pytest.raises(onesided.EpochError):
        {
            "Lock": lambda: win.Lock(0),
            "Lock_all": win.Lock_all,
            "Start": lambda: win.Start([0]),
            "Post": lambda: win.Post([0]),
            "Fence": win.Fence,
            "Free": win.Free,
        }[misuse]()
    _close(win, epoch)
    still_works(win)


def test_op_to_a_target_outside_the_start_group(win: Window) -> None:
    """In a world of one the only group without rank 0 is the empty one."""
    win.Start([])
    with pytest.raises(onesided.EpochError):
        win.Put(ONE, 0, 1)
    win.Complete()
    assert np.frombuffer(win, np.int64)[1] == 0, "the refused Put was sent"
    still_works(win)


def test_free_then_del_unmaps_an_allocate_window_without_a_cycle_collection() -> None:
    """Free keeps an Allocate window's memory mapped while the window object
    lives (numpy views of it may outlive Free); once the last reference goes,
    the mapping goes with it, at once: the window holds no reference cycle
    that would wait for the garbage collector (disabled here)."""
    import gc

    def shm_mappings() -> int:  # libfabric's /dev/shm files and onesided's nameless memfds
        with open("/proc/self/maps") as f:
            return sum("/dev/shm/" in line or "/memfd:onesided-" in line for line in f)

    was = gc.isenabled()
    gc.disable()
    try:
        Window.Allocate(64, 8).Free()  # the process's own mappings (doorbell, provider) stay
        before = shm_mappings()
        win = Window.Allocate(64, 8)
        assert win.atomics.path == "shared-memory"
        win.Flush(0)
        assert shm_mappings() > before
        win.Free()
        del win
        assert shm_mappings() == before, "the freed window's mapping outlived its last reference"
    finally:
        if was:
            gc.enable()
