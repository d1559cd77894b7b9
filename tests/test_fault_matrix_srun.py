"""Every job ends under srun too (issue 25): the fault matrix's srun cells.

The cases and the measuring are tests/test_fault_matrix.py's (rank 0
stands in a state, rank 1 loops in Python; tests/ranks/fault_matrix.py),
here on the real Slurm of the ``slurm_cluster`` fixture, the two ranks on
two nodes (so across hosts, over the network provider), started as users
should start them:

    srun -N 2 -n 2 --mpi=pmi2 --quit-on-interrupt --kill-on-bad-exit=1 python fault_matrix.py STATE

``--quit-on-interrupt``: without it srun's first SIGINT only prints the
step's status (a second within a second ends it); ``--kill-on-bad-exit=1``:
without it a rank that dies leaves the others running until they end on
their own, which a rank waiting on the dead one never does. docs/slurm.md
says so. Each cell asserts that srun and both ranks are gone within BOUND
seconds of the signal, that srun's words name the signal (its exit status
cannot: :func:`srun_names_signal`),
and that nothing of onesided's is left in /dev/shm. Run with ``-s`` for
the table of measured times.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from cluster.slurm import SlurmCluster
from conftest import RANKS
from test_fault_matrix import BOUND, SIGNALS, check_nothing_left, print_matrix, signal_and_measure

STATES = ["fence", "lock", "notify", "pscw", "request", "create", "free", "busy"]
SRUN_FLAGS = ["--mpi=pmi2", "--quit-on-interrupt", "--kill-on-bad-exit=1"]
MEASURED: dict[tuple[str, str, str], float] = {}


def start(cluster: SlurmCluster, state: str) -> subprocess.Popen[str]:
    env = cluster.env({**os.environ, "ONESIDED_TEST_COMM": "mpi"})
    env.pop("ONESIDED_TEST_PROVIDER", None)  # across nodes: the default choice, the network provider
    env["PYTHONPATH"] = os.pathsep.join([str(RANKS), *filter(None, [env.get("PYTHONPATH")])])
    cmd = ["srun", "-N", "2", "-n", "2", *SRUN_FLAGS, sys.executable, str(RANKS / "fault_matrix.py"), state]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)


def srun_names_signal(fault: str, err: str) -> bool:
    """srun's words name the signal. srun exits 137 after a signal of its
    own (it ends the step with SIGKILL), so its status cannot: SIGINT is
    forwarded as Ctrl-C (whether a rank's KeyboardInterrupt traceback is
    printed before the SIGKILL that --quit-on-interrupt sends right after
    is srun's race, not checked), SIGTERM forces the step's termination
    without one;
    a rank's end is reported as "task R: Killed" or "task R: Interrupt"."""
    if fault == "launcher-SIGINT":
        return "srun: sending Ctrl-C to StepId=" in err
    if fault == "launcher-SIGTERM":
        return "srun: forcing job termination" in err and "Ctrl-C" not in err
    task, word = (1, "Killed") if fault == "rank-SIGKILL" else (0, "Interrupt")
    return re.search(rf"srun: error: \S+: task {task}: {word}$", err, re.M) is not None


@pytest.mark.timeout(120)
@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("fault", SIGNALS)
def test_the_srun_job_ends(slurm_cluster: SlurmCluster, fault: str, state: str) -> None:
    proc = start(slurm_cluster, state)
    try:
        pids, signum, took, out, err = signal_and_measure(proc, state, fault)
    finally:
        slurm_cluster.run("scancel", "--user=root")  # no-op unless the cell failed with the job alive
    text = f"exit {proc.returncode}\nstdout:\n{out}\nstderr:\n{err}"
    MEASURED["srun", fault, state] = took
    print(f"MATRIX srun {fault} {state}: ended in {took:.2f} s, exit {proc.returncode}")
    assert "RETURNED" not in out, text
    assert took < BOUND, f"the job took {took:.2f} s to end\n{text}"
    assert proc.returncode != 0 and srun_names_signal(fault, err), text
    check_nothing_left(list(pids.values()), text)


def test_report() -> None:
    """The srun cells as a table (run with -s); runs after every cell above."""
    if not MEASURED:
        pytest.skip("no cell ran")
    print_matrix(MEASURED, ["srun"], STATES)
