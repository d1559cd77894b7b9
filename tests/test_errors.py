"""Bad input gets a clear onesided.Error naming the rule, in a plain process
(a world of size 1, as in a notebook). Nothing here needs other ranks: the
origin checks everything before sending."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import onesided
from onesided import Window


@pytest.fixture
def win():
    w = Window.Allocate(64, disp_unit=8)
    yield w
    try:
        w.Free()
    except onesided.EpochError:
        pass


def test_plain_process_is_a_world_of_size_one():
    comm = onesided.COMM_WORLD
    assert (comm.Get_rank(), comm.Get_size(), comm.rank, comm.size) == (0, 1, 0, 1)
    assert comm.allgather("x") == ["x"]
    assert comm.bcast(5) == 5
    comm.Barrier()


def test_allocate_exposes_memory_through_the_buffer_protocol(win):
    a = np.frombuffer(win, dtype=np.int64)
    b = np.frombuffer(win.tomemory(), dtype=np.int64)
    assert a.shape == (8,) and (a == 0).all()
    with win.lock(0):
        win.Put(np.arange(8, dtype=np.int64), 0)
    assert list(b) == list(range(8))
    base, size, disp_unit = win.attrs
    assert (size, disp_unit) == (64, 8) and base == a.ctypes.data
    assert win.flavor == onesided.FLAVOR_ALLOCATE and win.model == onesided.WIN_UNIFIED
    assert (win.group_rank, win.group_size) == (0, 1)
    assert win.info["accumulate_ordering"] == "rar,raw,war,waw"
    assert "provider=shm" in repr(win)


def test_create_over_a_slice_keeps_the_rest_untouched():
    big = np.full(30, -1, np.int32)
    with Window.Create(big[10:20], disp_unit=4) as w:
        with w.lock(0):
            w.Put(np.arange(10, dtype=np.int32), 0)
            with pytest.raises(onesided.BoundsError):
                w.Put(np.arange(11, dtype=np.int32), 0)
            with pytest.raises(onesided.BoundsError):
                w.Put(np.arange(1, dtype=np.int32), 0, -1)
    assert (big[:10] == -1).all() and (big[20:] == -1).all()
    assert list(big[10:20]) == list(range(10))


def test_read_only_memory_and_result_buffers_are_rejected(win):
    ro = np.zeros(4, np.int64)
    ro.flags.writeable = False
    with pytest.raises(onesided.ArgumentError, match="read-only"):
        Window.Create(ro)
    with pytest.raises(onesided.ArgumentError, match="read-only"):
        Window.Create(b"bytes are immutable")
    with win.lock(0):
        with pytest.raises(onesided.ArgumentError, match="read-only"):
            win.Get(ro, 0)
        with pytest.raises(onesided.ArgumentError, match="read-only"):
            win.Fetch_and_op(np.ones(1, np.int64), ro, 0)


def test_mismatched_dtypes_and_counts_are_rejected(win):
    with win.lock(0):
        with pytest.raises(onesided.ArgumentError, match="dtypes differ"):
            win.Get_accumulate(np.ones(2, np.int64), np.zeros(2, np.float64), 0)
        with pytest.raises(onesided.ArgumentError, match="counts differ"):
            win.Get_accumulate(np.ones(2, np.int64), np.zeros(3, np.int64), 0)
        with pytest.raises(onesided.ArgumentError, match="target dtype"):
            win.Put(np.ones(2, np.int64), 0, (0, 2, np.float64))
        with pytest.raises(onesided.ArgumentError, match="target count"):
            win.Put(np.ones(2, np.int64), 0, (0, 3))
        with pytest.raises(onesided.ArgumentError, match="needs"):
            win.Put((np.ones(2, np.int64), 5), 0)
        with pytest.raises(onesided.ArgumentError, match="strided view moves all of its 4 elements"):
            win.Put([np.ones(8, np.int64)[::2], 3], 0)
        with pytest.raises(onesided.ArgumentError, match="buffer protocol"):
            win.Put([1, 2, 3], 0)
        with pytest.raises(onesided.ArgumentError, match="not in the window's group"):
            win.Put(np.ones(1, np.int64), 3)


def test_meaningless_ops_and_dtypes_are_rejected(win):
    with win.lock(0):
        with pytest.raises(onesided.UnsupportedError, match="band is not defined for dtype float64"):
            win.Accumulate(np.ones(1), 0, op=onesided.BAND)
        with pytest.raises(onesided.UnsupportedError, match="float16"):
            win.Put(np.ones(1, np.float16), 0)
        with pytest.raises(onesided.ArgumentError, match="NO_OP|no_op"):
            win.Accumulate(np.ones(1, np.int64), 0, op=onesided.NO_OP)
        with pytest.raises(onesided.ArgumentError, match="not an op"):
            win.Accumulate(np.ones(1, np.int64), 0, op="sum")


def test_epoch_misuse_is_rejected(win):
    one = np.ones(1, np.int64)
    with pytest.raises(onesided.EpochError, match="outside an access epoch"):
        win.Put(one, 0)
    with pytest.raises(onesided.EpochError, match="without a matching Lock"):
        win.Unlock(0)
    with pytest.raises(onesided.EpochError, match="Unlock_all without"):
        win.Unlock_all()
    win.Lock(0)
    with pytest.raises(onesided.EpochError, match="already locked"):
        win.Lock(0)
    with pytest.raises(onesided.EpochError, match="Fence inside"):
        win.Fence()
    with pytest.raises(onesided.EpochError, match="Free while"):
        win.Free()
    win.Unlock(0)
    win.Fence()
    win.Put(one, 0)
    with pytest.raises(onesided.EpochError, match="inside a fence epoch"):
        win.Lock(0)
    win.Fence(onesided.MODE_NOSUCCEED)
    win.Free()
    with pytest.raises(onesided.EpochError, match="freed"):
        win.Lock(0)


def test_unknown_info_keys_are_ignored_but_not_in_onesideds_namespace():
    """As MPI does, a key onesided does not know is ignored (another
    library's hints may share the info); a misspelt onesided_* key raises."""
    w = Window.Allocate(8, info={"provder": "tcp;ofi_rxm", "cb_nodes": "4"})
    assert "provder" not in w.info and w.provider == "shm"
    w.Free()
    with pytest.raises(onesided.ArgumentError, match="unknown onesided info key 'onesided_nastty'"):
        Window.Allocate(8, info={"onesided_nastty": "1"})
    w = Window.Allocate(8, info={"no_locks": "false", "accumulate_ordering": "none", "provider": "shm"})
    assert w.provider == "shm"
    w.Free()
    with pytest.raises(onesided.TransportError, match="fi_getinfo"):
        Window.Allocate(8, info={"provider": "no-such-provider"})


def test_errors_form_one_hierarchy():
    for cls in (onesided.ArgumentError, onesided.BoundsError, onesided.EpochError, onesided.UnsupportedError,
                onesided.TransportError, onesided.OpSetError):
        assert issubclass(cls, onesided.Error)
    assert issubclass(onesided.BoundsError, IndexError)
    assert issubclass(onesided.ArgumentError, ValueError)


def test_mpi4py_constants_and_info_are_accepted():
    MPI = pytest.importorskip("mpi4py.MPI")
    info = MPI.Info.Create()
    info.Set("provider", "shm")
    w = Window.Allocate(16, disp_unit=8, info=info, comm=MPI.COMM_SELF)
    info.Free()
    got = np.zeros(1, np.int64)
    w.Lock(0, MPI.LOCK_SHARED, MPI.MODE_NOCHECK)
    w.Accumulate((np.array([3, 4], np.int64), 2, MPI.INT64_T), 0, (0, 2, MPI.INT64_T), MPI.SUM)
    w.Fetch_and_op(np.array([2], np.int64), got, 0, 1, MPI.PROD)
    w.Flush(0)
    w.Unlock(0)
    assert got[0] == 4 and list(np.frombuffer(w, np.int64)) == [3, 8]
    with pytest.raises(onesided.UnsupportedError, match="no onesided equivalent"):
        w.Fence()
        w.Accumulate(np.ones(1, np.int64), 0, op=MPI.OP_NULL)
    w.Fence(MPI.MODE_NOSUCCEED)
    w.Free()


def test_mpi4py_ops_stay_right_on_the_shortcut_forms():
    """An mpi4py op is translated once, then recognised by the bindings'
    shortcut forms by identity: every later call must still apply that op and
    no other (each op gives a different result here)."""
    MPI = pytest.importorskip("mpi4py.MPI")
    w = Window.Allocate(8, disp_unit=8, comm=MPI.COMM_SELF)
    got = np.zeros(1, np.int64)
    two = np.array([2], np.int64)
    want = 1
    w.Lock(0)
    w.Put(np.array([1], np.int64), 0)
    w.Flush(0)
    for rnd in range(3):  # the first round translates, the later ones hit the shortcut forms
        for op, apply in ((MPI.SUM, lambda v: v + 2), (MPI.PROD, lambda v: v * 2), (MPI.MAX, lambda v: max(v, 2)),
                          (MPI.BXOR, lambda v: v ^ 2), (MPI.NO_OP, lambda v: v)):
            w.Fetch_and_op(two, got, 0, 0, op)
            w.Flush(0)
            assert got[0] == want, (rnd, op, got[0], want)
            want = apply(want)
        w.Accumulate(two, 0, None, MPI.REPLACE)
        w.Flush(0)
        want = 2
    w.Unlock(0)
    assert np.frombuffer(w, np.int64)[0] == want
    w.Free()


def test_threads_share_one_window():
    """Blocking calls release the GIL and the window is thread-safe: four
    threads fetch-and-add on one counter and every ticket is unique."""
    w = Window.Allocate(8, disp_unit=8)
    tickets: list[int] = []

    def worker() -> None:
        got, one = np.zeros(1, np.int64), np.ones(1, np.int64)
        mine = []
        for _ in range(500):
            w.Fetch_and_op(one, got, 0)
            w.Flush(0)
            mine.append(int(got[0]))
        tickets.extend(mine)

    w.Lock_all()
    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    w.Unlock_all()
    assert sorted(tickets) == list(range(2000))
    w.Free()


def test_process_exits_cleanly_after_failures_and_unfreed_windows():
    """No crash at interpreter exit: a provider that failed to open, a window
    never freed and one still locked must not take the process down."""
    import subprocess
    import sys

    script = (
        "import numpy as np, onesided\n"
        "try:\n"
        "    onesided.Window.Allocate(8, info={'provider': 'no-such-provider'})\n"
        "except onesided.TransportError:\n"
        "    pass\n"
        "kept = onesided.Window.Allocate(64, disp_unit=8)\n"
        "locked = onesided.Window.Create(np.zeros(4))\n"
        "locked.Lock(0)\n"
        "locked.Put(np.ones(1), 0)\n"
        "print('done')\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, (proc.returncode, proc.stderr)
    assert proc.stdout.strip() == "done"


def test_leftover_shm_region_of_a_killed_process_with_our_pid_is_cleared():
    """A SIGKILLed process leaves /dev/shm/<pid>:... behind; a later process
    that reuses the pid must still open the shm provider."""
    import subprocess
    import sys

    script = (
        "import os, numpy as np, onesided\n"
        "open(f'/dev/shm/{os.getpid()}:0:0', 'wb').write(b'stale')\n"
        "w = onesided.Window.Allocate(8, info={'provider': 'shm'})\n"
        "w.Free()\n"
        "print('opened')\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "opened"
