"""Rank death (issue 13): a rank is SIGKILLed in a given synchronisation
state, under onesided's launcher and under mpiexec, on the shared-memory
path and on the provider path. Every other rank must end within 5 s of the
kill (raising a onesided.Error naming the dead rank, or stopped by the
launcher), the job must fail, and nothing the job made may stay in
/dev/shm once onesided has swept (the launcher sweeps after every job; the
next onesided process does so at start).

The in-library detection (a survivor waiting for a dead rank raises,
whatever started the ranks) is tested in cpp/tests/test_window.cpp
(RankDeath.*), where nothing kills the survivor first."""

from __future__ import annotations

import os
import re
import time

import pytest

import onesided
from conftest import run_ranks

STATES = ["lock", "flush", "fence", "pscw"]


def leftovers(pids: list[str]) -> list[str]:
    """/dev/shm entries named after the job's ranks."""
    names = os.listdir("/dev/shm")
    return [n for n in names for p in pids if n.startswith((f"{p}:", f"onesided-bell-{p}", f"onesided-{p}-"))]


@pytest.mark.parametrize("path", ["shared", "provider"])
@pytest.mark.parametrize("launcher", ["onesided", "mpiexec"])
@pytest.mark.parametrize("state", STATES)
def test_rank_death_ends_the_job_within_5_s(state: str, launcher: str, path: str) -> None:
    out = run_ranks("faults.py", 2, state, path, launcher=launcher, timeout=60, check=False)
    ended = time.time()
    kills = re.findall(r"^KILL ([0-9.]+)", out.stdout, re.M)
    assert kills, f"rank 1 did not reach its death\n{out.stdout}\n{out.stderr}"
    assert ended - float(kills[0]) < 5.0, f"job took {ended - float(kills[0]):.1f} s after the kill\n{out.stderr}"
    assert out.returncode != 0, out.stdout
    assert "finished without error" not in out.stdout, out.stdout
    pids = re.findall(r"^PID (\d+)", out.stdout, re.M)
    if launcher == "mpiexec":
        onesided._core.remove_stale_shared_memory()  # what the next onesided process does at start
    assert leftovers(pids) == [], "left in /dev/shm"
