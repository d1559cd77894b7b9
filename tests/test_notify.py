"""Notified RMA (issue 16): litmus tests on real ranks over every path, and
the argument rules in one process."""

from __future__ import annotations

import re

import numpy as np
import pytest

import onesided
from conftest import run_ranks
from onesided import Window

# Where the ops run: the shared-memory path (Allocate on one host), libfabric
# shm with it off, tcp, and nasty mode over libfabric shm.
PATHS = {
    "shared_memory": ("shm", {}),
    "libfabric_shm": ("shm", {"ONESIDED_SHARED_MEMORY": "off"}),
    "tcp": ("tcp;ofi_rxm", {}),
    "nasty": ("shm", {"ONESIDED_SHARED_MEMORY": "off", "ONESIDED_NASTY": "7"}),
}
# Rounds per check: the shared-memory path is cheap enough for 10^5 trials
# of the put litmus; a provider round trip costs tens of microseconds
# (more on this 2-core machine), so they take fewer.
ROUNDS = {"shared_memory": 100_000, "libfabric_shm": 10_000, "tcp": 5_000, "nasty": 5_000}


def ran(out: str, check: str) -> int:
    m = re.search(rf"^PASS {check} rounds=(\d+)$", out, re.M)
    assert m, out
    return int(m.group(1))


@pytest.mark.parametrize("path", list(PATHS))
def test_put_notification_never_precedes_its_data(path: str) -> None:
    provider, env = PATHS[path]
    out = run_ranks("notify.py", 2, "put", str(ROUNDS[path]), provider=provider, env=env, timeout=300)
    assert ran(out.stdout, "put") == ROUNDS[path]


@pytest.mark.parametrize("check", ["get", "acc", "order", "epochs"])
@pytest.mark.parametrize("path", list(PATHS))
def test_get_accumulate_order_and_active_epochs(path: str, check: str) -> None:
    provider, env = PATHS[path]
    rounds = max(ROUNDS[path] // 10, 500)
    out = run_ranks("notify.py", 2, check, str(rounds), provider=provider, env=env, timeout=240)
    assert ran(out.stdout, check) == rounds


@pytest.mark.parametrize("path", ["shared_memory", "libfabric_shm", "tcp"])
def test_counts_are_exact_under_several_origins_and_threads(path: str) -> None:
    provider, env = PATHS[path]
    out = run_ranks("notify.py", 3, "exact", "400", provider=provider, env=env, timeout=240)
    assert ran(out.stdout, "exact") == 400


def test_notified_rma_under_mpiexec_over_an_mpi4py_communicator() -> None:
    pytest.importorskip("mpi4py.MPI")
    out = run_ranks("notify.py", 2, "put", "1000", launcher="mpiexec", provider="shm")
    assert ran(out.stdout, "put") == 1000


# ---- one process -------------------------------------------------------------


@pytest.fixture(params=["shared_memory", "provider"])
def win(request: pytest.FixtureRequest):
    info = {"onesided_notifications": "3"}
    if request.param == "provider":
        info["onesided_shared_memory"] = "off"
    w = Window.Allocate(64, 8, info=info)
    yield w
    w.Free()


def test_counters_count_and_reset_without_losing_increments(win: Window) -> None:
    assert win.notifications == 3
    assert win.Get_info()["onesided_notifications"] == "3"
    assert win.notify_mechanism == win.Get_info()["onesided_notify"]
    v = np.arange(4, dtype=np.int64)
    win.Lock(0)
    for _ in range(5):
        win.Put_notify(v, 0, notification_idx=2)
    r = win.Raccumulate_notify(v, 0, 4, notification_idx=1)
    r.Wait()
    win.Unlock(0)
    assert win.Get_notify_value(2) == 5 and win.Get_notify_value(1) == 1 and win.Get_notify_value(0) == 0
    assert win.Test_notify(2, 5) and not win.Test_notify(2, 6)
    assert win.Set_notify_value(2, 0) == 5 and win.Get_notify_value(2) == 0
    assert win.Set_notify_value(0, 10) == 0 and win.Test_notify(0, 10)
    win.Wait_notify(0, 3)  # already reached: returns at once
    assert list(np.frombuffer(win, np.int64)[:8]) == [0, 1, 2, 3, 0, 1, 2, 3]


def test_get_notify_reads_then_notifies(win: Window) -> None:
    np.frombuffer(win, np.int64)[:] = 42
    got = np.zeros(8, np.int64)
    win.Lock(0)
    req = win.Rget_notify(got, 0, notification_idx=0)
    req.Wait()
    win.Unlock(0)
    assert (got == 42).all() and win.Get_notify_value(0) == 1


def test_bad_notification_index_raises_before_anything_is_written(win: Window) -> None:
    mem = np.frombuffer(win, np.int64)
    mem[:] = 0
    v = np.full(8, 5, np.int64)
    win.Lock(0)
    for bad, err in [(3, onesided.ArgumentError), (-1, onesided.ArgumentError), (2**64, onesided.ArgumentError),
                     (1.0, onesided.ArgumentTypeError), ("0", onesided.ArgumentTypeError),
                     (True, onesided.ArgumentTypeError)]:
        for call in (lambda: win.Put_notify(v, 0, notification_idx=bad),
                     lambda: win.Accumulate_notify(v, 0, notification_idx=bad),
                     lambda: win.Rput_notify(v, 0, notification_idx=bad),
                     lambda: win.Notify(0, bad),
                     lambda: win.Wait_notify(bad, 1)):
            with pytest.raises(err, match="notification_idx"):
                call()
    win.Unlock(0)
    assert (mem == 0).all(), "a refused notified put wrote"
    assert [win.Get_notify_value(i) for i in range(3)] == [0, 0, 0]


def test_notified_ops_need_an_access_epoch_and_proc_null_is_a_no_op(win: Window) -> None:
    v = np.ones(8, np.int64)
    with pytest.raises(onesided.EpochError):
        win.Put_notify(v, 0, notification_idx=0)
    with pytest.raises(onesided.EpochError):
        win.Notify(0, 0)
    win.Put_notify(v, onesided.PROC_NULL, notification_idx=0)
    assert not win.Rput_notify(v, onesided.PROC_NULL, notification_idx=0)
    assert win.Get_notify_value(0) == 0


@pytest.mark.parametrize("value", ["-1", "x", "1e3", " 4", "1048577", "4.0"])
def test_bad_counter_counts_are_refused(value: str) -> None:
    with pytest.raises(onesided.ArgumentError, match="onesided_notifications"):
        Window.Allocate(8, 1, info={"onesided_notifications": value})


def test_windows_without_counters_refuse_notification_and_cost_nothing() -> None:
    w = Window.Allocate(8, 1)
    try:
        assert w.notifications == 0 and w.Get_info()["onesided_notify"] == "none"
        w.Lock(0)
        with pytest.raises(onesided.ArgumentError, match="no notification counters"):
            w.Put_notify(np.zeros(1, np.int8), 0)
        w.Unlock(0)
    finally:
        w.Free()


@pytest.mark.ranks(2, timeout=60)
def test_counter_counts_must_match_across_ranks() -> None:
    """Ranks that ask for different counter counts all raise the same error,
    from the creation's agreement (on 2 ranks: docs/testing.md)."""
    comm = onesided.COMM_WORLD
    with pytest.raises(onesided.ArgumentError, match="onesided_notifications") as raised:
        Window.Allocate(8, 1, info={"provider": "shm", "onesided_notifications": str(2 + comm.rank)})
    assert len(set(comm.allgather(str(raised.value)))) == 1, comm.allgather(str(raised.value))
