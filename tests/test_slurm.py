"""onesided under a real Slurm (issue 26): Debian's Slurm 22.05 started by
the tests on three simulated hosts (tests/cluster/slurm.py, the
``slurm_cluster`` fixture of tests/conftest.py).

* ``srun --mpi=pmi2`` with mpi4py: MPICH reads srun's PMI, onesided's
  windows span the job across the nodes, and every check of
  tests/ranks/multihost.py passes (exact fetch-and-op tickets, locks,
  put/get, ordering, notified RMA);
* ``salloc -N 3`` then ``python -m onesided run``: the launcher places its
  ranks on the allocated nodes through ``srun --overlap`` (Slurm's node
  names resolve nowhere: it reaches them by NodeAddr), never through ssh;
* ``sbatch --wait``: the batch script runs the launcher on the first node,
  and the output file holds the result;
* ``scancel`` of a running job: every rank gone within 2 s, nothing of
  onesided's left in /dev/shm;
* the harness itself: a second cluster runs beside the first, each one's
  commands reaching only its own nodes.

Needs root (network namespaces) and Debian's slurm-wlm and munge
(tools/setup-debian.sh); skipped with the reason otherwise. How to run
onesided under Slurm, and what this proves: docs/slurm.md.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cluster.slurm import SlurmCluster
from conftest import RANKS, Lines, alive, reap
from test_fault_matrix import onesided_files
from test_multihost import placed
from onesided.run._spawn import finish

TIMEOUT = 90
SCANCEL_BOUND = 2.0  # seconds from scancel to the last rank gone


def job(cluster: SlurmCluster, cmd: list[str], env: dict[str, str] | None = None,
        cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run a Slurm client command (srun, salloc, sbatch --wait) to its end;
    past TIMEOUT cancel every job of the cluster and fail the test."""
    full_env = cluster.env({**os.environ, **(env or {})})
    full_env.pop("ONESIDED_TEST_PROVIDER", None)  # the default choice across hosts is what is tested
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env,
                            cwd=cwd, start_new_session=True)
    out, err, expired = finish(proc, TIMEOUT)
    if expired:
        cluster.run("scancel", "--user=root")
        pytest.fail(f"{' '.join(cmd)} timed out after {TIMEOUT} s (load {os.getloadavg()[0]:.1f})\n"
                    f"stdout:\n{out}\nstderr:\n{err}\n{cluster.logs()}")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def on_nodes(cluster: SlurmCluster, per_node: int) -> dict[int, str]:
    """The placement of ``per_node`` consecutive ranks on each node in turn."""
    nodes = cluster.nodes
    return {r: f"{nodes[r // per_node].name}@{nodes[r // per_node].address}" for r in range(per_node * len(nodes))}


def check_multihost(proc: subprocess.CompletedProcess[str]) -> None:
    text = f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert proc.returncode == 0, text
    assert "PASS multihost" in proc.stdout, text
    assert re.search(r"^LITMUS raw trials=\d+ violations=0$", proc.stdout, re.M), text
    assert re.search(r"^NOTIFY rounds=\d+ late=0$", proc.stdout, re.M), text
    print(proc.stdout)


def srun_multihost(cluster: SlurmCluster, ranks: int) -> subprocess.CompletedProcess[str]:
    cmd = ["srun", "-N", "3", "-n", str(ranks), f"--ntasks-per-node={ranks // 3}", "--mpi=pmi2", "--kill-on-bad-exit=1",
           sys.executable, "-m", "mpi4py", str(RANKS / "multihost.py")]
    return job(cluster, cmd, {"ONESIDED_TEST_COMM": "mpi"})


@pytest.mark.timeout(TIMEOUT + 30)
def test_srun_pmi2_mpi4py_three_nodes(slurm_cluster: SlurmCluster) -> None:
    """One rank per node: srun's PMI gives MPICH the job, onesided's windows
    span the nodes over the network provider."""
    proc = srun_multihost(slurm_cluster, 3)
    check_multihost(proc)
    assert placed(proc.stdout) == on_nodes(slurm_cluster, 1)


@pytest.mark.timeout(TIMEOUT + 30)
def test_srun_pmi2_mpi4py_two_ranks_per_node(slurm_cluster: SlurmCluster) -> None:
    """Six ranks, two a node (srun's block distribution): across nodes the
    provider, within one node shared memory."""
    proc = srun_multihost(slurm_cluster, 6)
    check_multihost(proc)
    assert placed(proc.stdout) == on_nodes(slurm_cluster, 2)
    assert proc.stdout.count("SAME-HOST") == 3 and "path=shared-memory" in proc.stdout


def no_ssh(tmp_path: Path) -> dict[str, str]:
    """PATH with an ``ssh`` that records its call and fails: the launcher
    inside Slurm must not need it."""
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "ssh").write_text(f"#!/bin/sh\necho \"$@\" >> {tmp_path / 'ssh-called'}\nexit 255\n")
    (shim / "ssh").chmod(0o755)
    return {"PATH": f"{shim}{os.pathsep}{os.environ['PATH']}"}


@pytest.mark.timeout(TIMEOUT + 30)
def test_salloc_then_the_launcher(slurm_cluster: SlurmCluster, tmp_path: Path) -> None:
    """``salloc -N 3 python -m onesided run -n 6``: the launcher takes the
    allocation's nodes (its shell runs off them, so every rank starts
    through ``srun --overlap``), reaches them at their NodeAddr, and every
    check passes on onesided's own COMM_WORLD."""
    cmd = ["salloc", "-N", "3", sys.executable, "-m", "onesided", "run", "-n", "6", "--timeout", str(TIMEOUT - 15),
           str(RANKS / "multihost.py")]
    proc = job(slurm_cluster, cmd, {**no_ssh(tmp_path), "ONESIDED_TEST_COMM": "onesided"})
    check_multihost(proc)
    nodes = slurm_cluster.nodes
    # The allocation gives each node one task: the launcher goes round the nodes.
    assert placed(proc.stdout) == {r: f"{nodes[r % 3].name}@{nodes[r % 3].address}" for r in range(6)}
    assert not (tmp_path / "ssh-called").exists(), (tmp_path / "ssh-called").read_text()


@pytest.mark.timeout(TIMEOUT + 30)
def test_sbatch_output_file_holds_the_result(slurm_cluster: SlurmCluster, tmp_path: Path) -> None:
    """The batch script runs on the first node, the launcher there starts
    that node's ranks itself and the others through srun; ``--wait``
    returns the job's status and the output file holds every rank's lines."""
    script = tmp_path / "job.sh"
    script.write_text(f"#!/bin/sh\n#SBATCH -N 3\nexec {sys.executable} -m onesided run -n 3 --timeout {TIMEOUT - 15} "
                      f"{RANKS / 'multihost.py'}\n")
    output = tmp_path / "job.out"
    proc = job(slurm_cluster, ["sbatch", "--wait", f"--output={output}", str(script)],
               {**no_ssh(tmp_path), "ONESIDED_TEST_COMM": "onesided"}, cwd=tmp_path)
    text = output.read_text() if output.exists() else "(no output file)"
    assert proc.returncode == 0, f"{proc.stdout}{proc.stderr}\n{text}"
    check_multihost(subprocess.CompletedProcess(proc.args, 0, text, ""))
    assert placed(text) == on_nodes(slurm_cluster, 1)
    assert not (tmp_path / "ssh-called").exists()


@pytest.mark.timeout(TIMEOUT + 30)
def test_scancel_ends_every_rank(slurm_cluster: SlurmCluster) -> None:
    """Three ranks on three nodes, rank 0 waiting in Fence for ranks that
    loop in Python (tests/ranks/fault_matrix.py): scancel ends every one
    within SCANCEL_BOUND seconds and leaves nothing in /dev/shm."""
    name = f"scancel-{os.getpid()}"
    env = slurm_cluster.env({**os.environ, "ONESIDED_TEST_COMM": "mpi"})
    env.pop("ONESIDED_TEST_PROVIDER", None)
    env["PYTHONPATH"] = os.pathsep.join([str(RANKS), *filter(None, [env.get("PYTHONPATH")])])
    cmd = ["srun", "-N", "3", "-n", "3", "--mpi=pmi2", f"--job-name={name}",
           sys.executable, str(RANKS / "fault_matrix.py"), "fence"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    lines = Lines(proc.stdout, deadline=60)
    took = None
    try:
        pids = [int(lines.expect(rf"^PID {r} (\d+)$").group(1)) for r in range(3)]
        lines.expect(r"^INSIDE$")
        jobs = slurm_cluster.run("squeue", "-h", "-n", name, "-o", "%i").stdout.split()
        assert len(jobs) == 1, jobs
        sent = time.monotonic()
        cancel = slurm_cluster.run("scancel", jobs[0])
        assert cancel.returncode == 0, cancel.stderr
        while any(alive(p) for p in pids) and time.monotonic() - sent < 30:
            time.sleep(0.005)  # polling the process table: what "gone" means
        took = time.monotonic() - sent
        proc.wait(timeout=30)
    finally:
        out, err = reap(proc, lines)
        if took is None:
            slurm_cluster.run("scancel", "-n", name)
    text = f"exit {proc.returncode}\nstdout:\n{out}\nstderr:\n{err}"
    print(f"SCANCEL every rank gone in {took:.2f} s")
    assert took < SCANCEL_BOUND, f"the ranks took {took:.2f} s to end\n{text}"
    assert "RETURNED" not in out, text
    assert proc.returncode != 0, text
    assert onesided_files(pids) == [], text


@pytest.mark.timeout(TIMEOUT)
def test_two_clusters_side_by_side(slurm_cluster: SlurmCluster, tmp_path: Path) -> None:
    """A second cluster (its own hosts, ports, munge key and socket) beside
    the session's: each one's commands reach its own controller and run on
    its own nodes, and the second leaves no daemon or host behind."""
    address = ["sh", "-c", "ip -o -4 addr show dev eth0"]  # the node's netns, unlike its name, is the cluster's own
    with SlurmCluster(1, tmp_path, index=7) as other:
        mine = other.run("srun", "-N", "1", *address)
        theirs = slurm_cluster.run("srun", "-N", "3", *address)
        daemons = other.daemon_pids()
    assert mine.returncode == 0 and theirs.returncode == 0, mine.stderr + theirs.stderr
    assert re.findall(r"inet (\S+)/", mine.stdout) == [other.nodes[0].address], mine.stdout
    assert sorted(re.findall(r"inet (\S+)/", theirs.stdout)) == [h.address for h in slurm_cluster.nodes], theirs.stdout
    assert not any(alive(pid) for pid in daemons)
    assert other.simulated.leftovers() == []
