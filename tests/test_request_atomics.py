"""Request-based fetching atomics (issue 16, item 2): Rfetch_and_op and
Rcompare_and_swap, an extension beyond MPI (MPI Forum issue #128). In one
process on the shared-memory path and on libfabric's shm provider (fast
path off), and on two ranks (tests/ranks/request_atomics.py) on the
shared-memory path, libfabric shm and tcp."""

from __future__ import annotations

import re

import numpy as np
import pytest

import onesided
from conftest import run_ranks
from onesided import Window

# Where the ops run (as tests/test_ordering.py): the shared-memory fast
# path, libfabric's shm provider, tcp.
PATHS = {
    "fast": ("shm", {}),
    "shm": ("shm", {"ONESIDED_FAST_PATH": "off"}),
    "tcp": ("tcp;ofi_rxm", {}),
}
IN_PROCESS = {"fast": {"provider": "shm"}, "shm": {"provider": "shm", "onesided_fast_path": "off"}}


@pytest.fixture(params=list(IN_PROCESS))
def win(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("ONESIDED_NASTY", raising=False)
    w = Window.Allocate(64, disp_unit=8, info=IN_PROCESS[request.param])
    yield w
    w.Free()


def test_results_valid_after_wait(win: Window) -> None:
    mem = np.frombuffer(win, np.int64)
    mem[:] = np.arange(8) * 10
    got = np.full(4, -1, np.int64)
    win.Lock(0)
    r1 = win.Rfetch_and_op(np.array([5], np.int64), got[0:1], 0, 2)
    r2 = win.Rfetch_and_op(None, got[1:2], 0, 3, onesided.NO_OP)
    r3 = win.Rcompare_and_swap(np.array([77], np.int64), np.array([40], np.int64), got[2:3], 0, 4)
    r4 = win.Rcompare_and_swap(np.array([88], np.int64), np.array([-5], np.int64), got[3:4], 0, 5)
    assert onesided.Request.Waitall([r1, r2, r3, r4]) is True
    assert list(got) == [20, 30, 40, 50]
    assert not any((r1, r2, r3, r4)), "completed requests stay active"
    win.Unlock(0)
    assert list(mem[2:6]) == [25, 30, 77, 50]


def test_proc_null_is_inactive(win: Window) -> None:
    r = win.Rfetch_and_op(None, None, onesided.PROC_NULL)
    assert not r and r.Wait() is True
    assert not win.Rcompare_and_swap(None, None, None, onesided.PROC_NULL)


BAD = [
    # (call, error class, words the message must contain)
    (lambda w: w.Rfetch_and_op(np.ones(1, np.int32), np.zeros(1, np.int64), 0), onesided.Error,
     "Rfetch_and_op origin and result"),
    (lambda w: w.Rfetch_and_op(np.ones(2, np.int64), np.zeros(2, np.int64), 0), onesided.Error,
     "Rfetch_and_op result"),
    (lambda w: w.Rfetch_and_op(np.ones(1, np.int64), np.zeros(1, np.int64), 0, 1.0), onesided.Error,
     "displacement"),
    (lambda w: w.Rfetch_and_op(np.ones(1, np.int64), np.zeros(1, np.int64), "0"), onesided.Error, "rank"),
    (lambda w: w.Rfetch_and_op(np.ones(1, np.int64), np.zeros(1, np.int64), 0, 8), onesided.BoundsError, ""),
    (lambda w: w.Rcompare_and_swap(np.ones(1, np.int64), np.ones(1, np.int32), np.zeros(1, np.int64), 0),
     onesided.Error, "Rcompare_and_swap compare and result"),
    (lambda w: w.Rcompare_and_swap(np.ones(1, np.int64), np.ones(1, np.int64), b"\0" * 8, 0), onesided.Error,
     "result"),
    (lambda w: w.Rcompare_and_swap(np.ones(1, np.int64), np.ones(1, np.int64), np.zeros(1, np.int64), 0, -1),
     onesided.Error, "displacement"),
]


@pytest.mark.parametrize("case", range(len(BAD)))
def test_bad_arguments_raise_before_anything_is_sent(win: Window, case: int) -> None:
    """As the blocking forms: a onesided.Error naming the argument, and the
    target untouched."""
    call, cls, words = BAD[case]
    mem = np.frombuffer(win, np.int64)
    mem[:] = 7
    win.Lock(0)
    with pytest.raises(cls, match=re.escape(words) if words else None):
        call(win)
    win.Unlock(0)
    assert (mem == 7).all()


def test_result_is_written_at_completion_not_at_issue(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nasty mode holds operations until their completion point: the result
    is untouched until Wait, and exact after it. A request form that ran the
    blocking call (result written at issue) fails the first half; one that
    never wrote the result, or reported completion first, the second."""
    monkeypatch.delenv("ONESIDED_NASTY", raising=False)
    w = Window.Allocate(64, disp_unit=8, info={"provider": "shm", "onesided_nasty": "7"})
    mem = np.frombuffer(w, np.int64)
    mem[:] = np.arange(8) + 100
    fetched, swapped = np.full(1, -1, np.int64), np.full(1, -1, np.int64)
    w.Lock(0)
    r1 = w.Rfetch_and_op(np.array([1], np.int64), fetched, 0, 1)
    r2 = w.Rcompare_and_swap(np.array([9], np.int64), np.array([102], np.int64), swapped, 0, 2)
    assert fetched[0] == -1 and swapped[0] == -1, "result written before the request completed"
    r1.Wait()
    assert fetched[0] == 101
    assert r2.Test() is True
    assert swapped[0] == 102
    w.Unlock(0)
    assert list(mem[1:3]) == [102, 9]
    w.Free()


@pytest.mark.parametrize("path", list(PATHS))
def test_tickets_unique_and_exact_on_two_ranks(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both ranks take tickets with Rfetch_and_op (SUM 1) and increment a
    second counter with Rcompare_and_swap retry loops, completing each
    request by Wait, by a Test loop, or by Waitall: every result is read at
    once after its completion is reported, so a result written late (or
    never) shows as a duplicate or missing ticket."""
    monkeypatch.delenv("ONESIDED_NASTY", raising=False)
    provider, env = PATHS[path]
    out = run_ranks("request_atomics.py", 2, "tickets", provider=provider, env=env, timeout=90)
    assert "PASS tickets" in out.stdout, out.stdout
