"""Accumulate ordering and nasty mode (issue 4): litmus tests on real ranks
(tests/ranks/ordering.py) on the shm and tcp providers, with and without
nasty mode, plus in-process checks of the info keys and of what nasty mode
holds back.

The LITMUS lines (trials and violations per litmus) are printed; see them
with ``pytest -s`` or ``pytest -rP``.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import onesided
from conftest import run_ranks
from onesided import Window

LITMUS = ["raw", "waw", "war"]
# Where the ops run: the intra-node fast path (CPU atomics, the default on
# one host), libfabric's shm provider (fast path off, as across hosts), tcp.
PATHS = {
    "fast": ("shm", {}),
    "shm": ("shm", {"ONESIDED_FAST_PATH": "off"}),
    "tcp": ("tcp;ofi_rxm", {}),
}
SEED = "12345"
LINE = re.compile(r"^LITMUS (\w+) trials=(\d+) violations=(\d+)", re.M)


def nasty_env(nasty: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Nasty mode on through ONESIDED_NASTY, or surely off (a value exported
    in the developer's shell must not leak into the "off" runs)."""
    if nasty == "on":
        return {"ONESIDED_NASTY": SEED}
    monkeypatch.delenv("ONESIDED_NASTY", raising=False)
    return {}


def litmus_lines(stdout: str) -> list[tuple[str, int, int]]:
    for line in stdout.splitlines():
        if line.startswith(("LITMUS", "ORDERING")):
            print(line)
    return [(kind, int(trials), int(violations)) for kind, trials, violations in LINE.findall(stdout)]


@pytest.mark.parametrize("nasty", ["off", "on"])
@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("litmus", LITMUS)
def test_litmus_default_ordering_has_no_violation(
    litmus: str, path: str, nasty: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With accumulate_ordering at its default, 2 x 2000 trials (both
    directions) of two accumulate-style ops in flight together show zero
    reorderings, natively, in software and with nasty mode's random issue
    order."""
    out = run_ranks("ordering.py", 2, f"litmus_{litmus}", "default", provider=PATHS[path][0],
                    env={**PATHS[path][1], **nasty_env(nasty, monkeypatch)}, timeout=60)
    assert f"PASS litmus_{litmus}" in out.stdout, out.stdout
    assert litmus_lines(out.stdout) == [(litmus, 4000, 0)], out.stdout


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("litmus", LITMUS)
def test_litmus_ordering_none_in_nasty_mode_shows_violations(
    litmus: str, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With accumulate_ordering=none nothing orders the two ops of a trial:
    nasty mode must actually reorder some of them (a nasty mode that issued
    in program order, or kept orders nobody asked for, shows none)."""
    out = run_ranks("ordering.py", 2, f"litmus_{litmus}", "none", "--expect-violations", provider=PATHS[path][0],
                    env={**PATHS[path][1], **nasty_env("on", monkeypatch)}, timeout=60)
    assert f"PASS litmus_{litmus}" in out.stdout, out.stdout
    [(kind, trials, violations)] = litmus_lines(out.stdout)
    assert (kind, trials) == (litmus, 4000) and 0 < violations <= trials, out.stdout


def test_litmus_under_mpiexec_in_nasty_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same litmus with mpi4py's COMM_WORLD as the window's group."""
    out = run_ranks("ordering.py", 2, "litmus_waw", "default", launcher="mpiexec", provider="tcp;ofi_rxm",
                    env=nasty_env("on", monkeypatch), timeout=60)
    assert "PASS litmus_waw" in out.stdout
    assert litmus_lines(out.stdout) == [("waw", 4000, 0)], out.stdout


@pytest.mark.parametrize("nasty", ["off", "on"])
@pytest.mark.parametrize("path", list(PATHS))
def test_large_accumulate_then_small_ones_keep_program_order(
    path: str, nasty: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 2 MiB Accumulate(SUM) followed, unflushed, by small REPLACEs inside
    its range: the target ends exactly as program order says."""
    out = run_ranks("ordering.py", 2, "large_then_small", "default", provider=PATHS[path][0],
                    env={**PATHS[path][1], **nasty_env(nasty, monkeypatch)}, timeout=60)
    assert "PASS large_then_small" in out.stdout, out.stdout
    assert litmus_lines(out.stdout) == [("large_then_small", 6, 0)], out.stdout


@pytest.mark.parametrize("nasty", ["off", "on"])
@pytest.mark.parametrize("path", list(PATHS))
def test_threads_keep_their_own_order(path: str, nasty: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two threads per rank, one shared Lock_all epoch: each thread's
    raw/waw trials keep program order."""
    out = run_ranks("ordering.py", 2, "threads_order", "default", provider=PATHS[path][0],
                    env={**PATHS[path][1], **nasty_env(nasty, monkeypatch)}, timeout=60)
    assert "PASS threads_order" in out.stdout, out.stdout
    assert litmus_lines(out.stdout) == [("threads_raw", 4000, 0), ("threads_waw", 4000, 0)], out.stdout


def test_threads_with_ordering_none_in_nasty_mode_show_violations(monkeypatch: pytest.MonkeyPatch) -> None:
    """Control for the threads check: without required orders, nasty mode
    reorders the threads' trials (else the check above proves nothing)."""
    out = run_ranks("ordering.py", 2, "threads_order", "none", "--expect-violations",
                    env=nasty_env("on", monkeypatch), timeout=60)
    assert "PASS threads_order" in out.stdout, out.stdout
    assert sum(v for _, _, v in litmus_lines(out.stdout)) > 0, out.stdout


# -- in one process (a world of size 1) ----------------------------------------


def test_ordering_info_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Get_info reports the ordering in force and a sentence on how it is
    kept; nasty mode is off unless asked for."""
    monkeypatch.delenv("ONESIDED_NASTY", raising=False)
    win = Window.Allocate(8, disp_unit=8, info={"provider": "shm"})
    info = win.Get_info()
    assert info["accumulate_ordering"] == "rar,raw,war,waw"
    assert isinstance(info["onesided_ordering"], str) and info["onesided_ordering"].strip()
    assert info["onesided_nasty"] == "off"
    win.Free()
    win = Window.Allocate(8, disp_unit=8, info={"provider": "shm", "accumulate_ordering": "none"})
    assert win.Get_info()["accumulate_ordering"] == "none"
    win.Free()
    win = Window.Allocate(8, disp_unit=8, info={"provider": "shm", "accumulate_ordering": "waw,raw"})
    assert set(win.Get_info()["accumulate_ordering"].split(",")) == {"raw", "waw"}
    win.Free()


@pytest.mark.parametrize("value, on", [("false", False), ("true", True), ("7", True)])
def test_nasty_info_key(value: str, on: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ONESIDED_NASTY", raising=False)
    win = Window.Allocate(8, disp_unit=8, info={"onesided_nasty": value})
    state = win.Get_info()["onesided_nasty"]
    if on:
        assert state.startswith("seed ") and state.split()[1].isdigit(), state
    else:
        assert state == "off", state
    win.Free()


def test_nasty_mode_holds_every_op_until_its_completion_point(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nasty mode queues ops at the origin: before the Flush a Put has not
    reached the (own) window memory and a Get or Fetch_and_op has not
    written its result; after it, all have. An implementation that issues
    at once (nasty mode doing nothing) fails the "before" half."""
    monkeypatch.delenv("ONESIDED_NASTY", raising=False)
    win = Window.Allocate(64, disp_unit=8, info={"provider": "shm", "onesided_nasty": "99"})
    mem = np.frombuffer(win, np.int64)
    data = np.arange(1, 5, dtype=np.int64)
    got, fetched = np.full(4, -1, np.int64), np.full(1, -1, np.int64)
    with win.lock(0):
        win.Put(data, 0, 0)
        assert (mem == 0).all(), "a Put reached the target before its completion point"
        win.Flush(0)
        assert list(mem[:4]) == [1, 2, 3, 4]
        win.Get(got, 0, 0)
        win.Fetch_and_op(np.array([10], np.int64), fetched, 0, 6, onesided.SUM)
        assert (got == -1).all() and fetched[0] == -1, "a result was written before completion"
        assert mem[6] == 0
        win.Flush(0)
        assert list(got) == [1, 2, 3, 4] and fetched[0] == 0 and mem[6] == 10
        win.Accumulate(np.array([5], np.int64), 0, 7)
        assert mem[7] == 0
    assert mem[7] == 5, "Unlock did not issue the held Accumulate"
    win.Free()


@pytest.mark.parametrize("ordering, violations", [("default", "none"), ("none", "some")])
def test_nasty_self_litmus(ordering: str, violations: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The waw and raw litmus in one process, to itself, in nasty mode: none
    with the default ordering, some with accumulate_ordering=none."""
    monkeypatch.delenv("ONESIDED_NASTY", raising=False)
    info = {"provider": "shm", "onesided_nasty": "2024"}
    if ordering == "none":
        info["accumulate_ordering"] = "none"
    n = 500
    win = Window.Allocate(8 * n, disp_unit=8, info=info)
    a = np.arange(1, n + 1, dtype=np.int64)
    b = a + 10**6
    result = np.full(n, -1, np.int64)
    with win.lock(0):
        for i in range(n):
            win.Accumulate(a[i : i + 1], 0, i, onesided.REPLACE)
            win.Accumulate(b[i : i + 1], 0, i, onesided.REPLACE)
            win.Fetch_and_op(None, result[i : i + 1], 0, i, onesided.NO_OP)
    landed = np.frombuffer(win, np.int64)
    assert (((landed == a) | (landed == b)).all() and
            ((result == 0) | (result == a) | (result == b)).all()), "values never written"
    count = int((landed != b).sum() + (result != b).sum())
    print(f"LITMUS self ordering={ordering} trials={2 * n} violations={count}")
    assert (count == 0) == (violations == "none"), count
    win.Free()
