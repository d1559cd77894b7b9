"""mpi4py's own RMA tests (test_rma, test_rma_nb, test_win of mpi4py's source
distribution) against onesided.Window, on 1 rank (a plain python process,
an MPI singleton) and on 2 ranks under MPICH's mpiexec.

tests/ranks/mpi4py_suite.py runs them with ``MPI.Win`` and ``MPI.WIN_NULL``
replaced by onesided's and prints one ``MPI4PY_SUITE {json}`` line per rank.
The tests come from build/mpi4py-tests, the test/ folder of the sdist of the
mpi4py installed, which `make test` fetches (the Makefile's
$(STAMPS)/mpi4py-tests; `make mpi4py-tests` alone).

Every rank must reach its end (the summary line, exit 0: a crash, such as
the DLPack capsules of dlpack-array/dlpack-numpy once caused, ends a rank
before it), with no failure and no error, having run at least MIN_TESTS
tests with each of BACKENDS, with no SystemError, segmentation fault or
signal in the output, and leaving nothing in /dev/shm.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import mpi4py
import pytest

import onesided
from conftest import RANKS, run_ranks
from onesided.run._spawn import finish

TESTDIR = Path(__file__).resolve().parent.parent / "build" / "mpi4py-tests"
TIMEOUT = 180  # each job; 1 rank takes about 8 s, 2 ranks about 20 s on an idle 2-core machine
DEADLINE = 60  # per mpi4py test (--deadline): a rank still in one then names it, dumps its stacks and ends
MIN_TESTS = 150  # what mpi4py 4.1.2's three modules hold
BACKENDS = {"array", "numpy", "dlpack-array", "dlpack-numpy"}
# Two ranks' lines reach mpiexec's stdout through its proxies, which keep
# each write whole but not always the newline between two: so a summary is
# found by its tag and read as one JSON object from there, and a pid by its
# tag alone.
SUMMARY = re.compile(r"MPI4PY_SUITE (?=\{)")
PID = re.compile(r"PID (\d+)")
CRASH_TEXT = ("SystemError", "Segmentation", "Caught signal")

pytestmark = pytest.mark.timeout(TIMEOUT + 60)


def mpi4py_testdir() -> str:
    """The fetched test folder, of the mpi4py version installed."""
    version = (TESTDIR / "VERSION").read_text().strip() if (TESTDIR / "VERSION").is_file() else None
    if version != mpi4py.__version__:
        pytest.fail(f"{TESTDIR} holds mpi4py {version}'s tests, not those of mpi4py {mpi4py.__version__} "
                    "installed: `make mpi4py-tests` (part of `make test`) fetches them")
    return str(TESTDIR)


def run_one_rank() -> subprocess.CompletedProcess[str]:
    """The runner in a plain python process (its own session, stopped with
    everything it started past TIMEOUT, as run_ranks does)."""
    cmd = [sys.executable, str(RANKS / "mpi4py_suite.py"), mpi4py_testdir(), "--deadline", str(DEADLINE)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    out, err, expired = finish(proc, TIMEOUT)
    if expired:
        pytest.fail(f"mpi4py_suite.py timed out after {TIMEOUT} s\nstdout:\n{out}\nstderr:\n{err}")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def run_two_ranks() -> subprocess.CompletedProcess[str]:
    return run_ranks("mpi4py_suite.py", 2, mpi4py_testdir(), "--deadline", str(DEADLINE), launcher="mpiexec",
                     provider=None, timeout=TIMEOUT, check=False)


def shm_left_by(pids: list[str]) -> list[str]:
    """/dev/shm entries named after these processes (libfabric's shm and onesided's own)."""
    names = os.listdir("/dev/shm")
    return [n for n in names for p in pids if n.startswith((f"{p}:", f"onesided-bell-{p}", f"onesided-{p}-"))]


@pytest.mark.parametrize("ranks", [1, 2], ids=["1-rank", "2-ranks"])
def test_mpi4py_rma_tests_pass_against_onesided_window(ranks: int) -> None:
    out = run_one_rank() if ranks == 1 else run_two_ranks()
    report = f"exit {out.returncode}\nstdout:\n{out.stdout[-4000:]}\nstderr (end):\n{out.stderr[-8000:]}"

    pids = PID.findall(out.stdout)
    left = shm_left_by(pids)
    if left:
        onesided._core.remove_stale_shared_memory()  # what the next onesided process would do

    decoder = json.JSONDecoder()
    summaries: list[dict[str, Any]] = [decoder.raw_decode(out.stdout, m.end())[0]
                                       for m in SUMMARY.finditer(out.stdout)]
    assert sorted(s["rank"] for s in summaries) == list(range(ranks)), f"not every rank reached its end\n{report}"
    assert out.returncode == 0, report
    for s in summaries:
        where = f"rank {s['rank']}: {json.dumps(s)}\n{report}"
        assert s["size"] == ranks and s["win_class"].startswith("onesided."), where
        assert s["failures"] == 0 and s["errors"] == 0, where
        assert s["run"] >= MIN_TESTS, where
        unused = sorted(BACKENDS - set(s["backends"]))
        assert not unused, f"backends that never ran: {unused}\n{where}"
    found = [text for text in CRASH_TEXT if text in out.stdout + out.stderr]
    assert not found, f"{found} in the output\n{report}"
    assert left == [], f"the ranks left {left} in /dev/shm\n{report}"
