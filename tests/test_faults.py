"""Rank death (issue 13): a rank is SIGKILLed in a given synchronisation
state, under onesided's launcher and under mpiexec, on the shared-memory
path and on the provider path. Every other rank must end within 5 s of the
kill (raising a onesided.Error naming the dead rank, or stopped by the
launcher), the job must fail, and nothing the job made may stay in
/dev/shm: nothing of onesided's at any time (its shared memory has no name),
and none of libfabric's shm regions once onesided has swept (the launcher
sweeps after every job; the next onesided process does so at start).

The in-library detection (a survivor waiting for a dead rank raises,
whatever started the ranks) is tested where nothing kills the survivor
first: test_unsupervised_survivor_raises_naming_the_dead_rank below, and
cpp/tests/test_window.cpp (RankDeath.*)."""

from __future__ import annotations

import os
import re
import time

import secrets
import subprocess
import sys

import pytest

import onesided
from conftest import RANKS, run_ranks
from onesided.comm._coordinator import Coordinator

STATES = ["lock", "flush", "request", "fence", "pscw"]


def leftovers(pids: list[str], libfabric: bool = True) -> list[str]:
    """/dev/shm entries named after the job's ranks: onesided's old names
    and, with ``libfabric``, libfabric shm's regions."""
    names = os.listdir("/dev/shm")
    prefixes = [f"onesided-bell-{p}" for p in pids] + [f"onesided-{p}-" for p in pids]
    if libfabric:
        prefixes += [f"{p}:" for p in pids]
    return [n for n in names if n.startswith(tuple(prefixes))]


@pytest.mark.parametrize("path", ["shared", "provider"])
@pytest.mark.parametrize("launcher", ["onesided", "mpiexec"])
@pytest.mark.parametrize("state", STATES)
def test_rank_death_ends_the_job_within_5_s(state: str, launcher: str, path: str) -> None:
    out = run_ranks("faults.py", 2, state, path, launcher=launcher, timeout=60, check=False)
    ended = time.time()
    kills = re.findall(r"^KILL ([0-9.]+)", out.stdout, re.M)
    assert kills, f"rank 1 did not reach its death\n{out.stdout}\n{out.stderr}"
    delay = ended - float(kills[0])
    print(f"FAULT {state} {launcher} {path}: the job ended {delay:.2f} s after the kill")  # shown with -s
    assert delay < 5.0, f"job took {delay:.1f} s after the kill\n{out.stderr}"
    assert out.returncode != 0, out.stdout
    assert "finished without error" not in out.stdout, out.stdout
    pids = re.findall(r"^PID (\d+)", out.stdout, re.M)
    assert leftovers(pids, libfabric=False) == [], "onesided's memory left in /dev/shm"
    if launcher == "mpiexec":
        onesided._core.remove_stale_shared_memory()  # libfabric's: what the next onesided process does at start
    assert leftovers(pids) == [], "left in /dev/shm"


# The states whose survivor waits for the dead rank itself. On the shared-
# memory path requests and flushes complete without the target (its memory
# is mapped here), so only the provider path can hang there.
UNSUPERVISED = [
    ("request", "provider"),
    ("request_test", "provider"),
    ("waitall", "provider"),
    ("flush", "provider"),
    ("lock", "shared"),
    ("lock", "provider"),
]


@pytest.mark.parametrize(("state", "path"), UNSUPERVISED)
def test_unsupervised_survivor_raises_naming_the_dead_rank(state: str, path: str) -> None:
    """Nothing stops the survivor: the ranks are plain processes started here
    around onesided's coordinator (which serves collectives and kills no
    one; Hydra stops the others even with -disable-auto-cleanup). The
    survivor's own wait must raise a onesided.Error naming rank 1 within 5 s."""
    token = secrets.token_hex(16)
    with Coordinator(2, token.encode("ascii")) as coordinator:
        procs = []
        for rank in range(2):
            env = dict(os.environ, ONESIDED_TEST_PROVIDER="shm", FAULTS_UNSUPERVISED="1")
            env.update(ONESIDED_COORD=coordinator.address, ONESIDED_RANK=str(rank), ONESIDED_SIZE="2")
            env.update(ONESIDED_TOKEN=token, ONESIDED_TEST_COMM="onesided")
            env["PYTHONPATH"] = os.pathsep.join([str(RANKS), *filter(None, [env.get("PYTHONPATH")])])
            cmd = [sys.executable, str(RANKS / "faults.py"), state, path]
            procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env))
        outs = []
        for proc in procs:
            try:
                outs.append(proc.communicate(timeout=30)[0])
            except subprocess.TimeoutExpired:
                for p in procs:
                    p.kill()
                pytest.fail(f"a rank did not end\n{[p.communicate()[0] for p in procs]}")
    text = "\n".join(f"rank {r}:\n{o}" for r, o in enumerate(outs))
    kills = re.findall(r"^KILL ([0-9.]+)", outs[1], re.M)
    raised = re.findall(r"^RAISED ([0-9.]+)", outs[0], re.M)
    assert kills and raised, text
    delay = float(raised[0]) - float(kills[0])
    print(f"FAULT unsupervised {state} {path}: the survivor raised {delay:.2f} s after the kill")  # shown with -s
    assert delay < 5.0, text
    assert re.search(r"^SURVIVOR TransportError: rank 1 \(pid \d+\) has died", outs[0], re.M), text
    pids = re.findall(r"^PID (\d+)", outs[0] + outs[1], re.M)
    assert leftovers(pids, libfabric=False) == [], "onesided's memory left in /dev/shm"
    onesided._core.remove_stale_shared_memory()  # libfabric's regions
    assert leftovers(pids) == [], "left in /dev/shm"
