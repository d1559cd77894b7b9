"""mpi4py.util.sync (Counter, Mutex, Condition, Semaphore) on onesided
windows, with their blocking waits, under both launchers (issue 14 item 4):
tests/ranks/sync.py hands util.sync ``onesided.Window`` in place of
``MPI.Win``."""

from __future__ import annotations

import pytest

from conftest import LAUNCHERS, run_ranks


@pytest.mark.parametrize("launcher", LAUNCHERS)
@pytest.mark.parametrize("n", [2, 3])
def test_util_sync(launcher: str, n: int) -> None:
    out = run_ranks("sync.py", n, "20", launcher=launcher, provider=None, timeout=90)
    assert out.stdout.count("PASS sync") == n, out.stdout
