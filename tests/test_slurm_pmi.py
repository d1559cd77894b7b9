"""srun starting ranks that cannot import mpi4py (issue 26, item 2, under
the real Slurm of tests/cluster/slurm.py): onesided's own PMI bootstrap
forms COMM_WORLD from what srun offers each process, across three nodes.

* ``--mpi=pmi2``: the PMI wire on PMI_FD, PMI-1 (the default) and PMI-2
  (``ONESIDED_PMI_VERSION=2``; Slurm's mpi/pmi2 serves both);
* ``--mpi=pmix``: PMIx through Debian's libpmix.so.2, loaded at run time,
  three ranks on one node: Slurm's pmix plugin makes each step's client
  directory under TmpFS, which every simulated node shares on this one
  machine, so on a second node the step fails to launch ("Cannot create
  client cli tmpdir ... File exists"), a limit of the simulation, not of
  onesided (slurm.conf has one TmpFS for all nodes);
* ``--mpi=none``: nothing to bootstrap from, so every rank refuses with
  WorldError instead of running as a world of one each.

Each rank takes a ticket with fetch_and_op on rank 0's counter through a
window (tests/ranks/pmi_world.py): the tickets are 0..N-1 only if the
ranks form one world whose windows span the nodes. mpi4py is hidden from
the ranks (tests/no_mpi4py.py), and each rank says which interface formed
its world.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cluster.slurm import SlurmCluster
from no_mpi4py import without_mpi4py
from test_pmi_world import SCRIPT, tickets
from test_slurm import job


@pytest.mark.timeout(180)
@pytest.mark.parametrize(
    "mpi, nodes, version, via",
    [
        ("pmi2", "3", "1", "PMI-1 wire on PMI_FD"),
        ("pmi2", "3", "2", "PMI-2 wire on PMI_FD"),
        ("pmix", "1", "", "PMIx ("),
    ],
)
def test_srun_without_mpi4py(slurm_cluster: SlurmCluster, tmp_path: Path, mpi: str, nodes: str, version: str,
                             via: str) -> None:
    env = without_mpi4py(tmp_path)
    if version:
        env["ONESIDED_PMI_VERSION"] = version
    cmd = ["srun", "-N", nodes, "-n", "3", f"--mpi={mpi}", sys.executable, str(SCRIPT), "tickets"]
    done = job(slurm_cluster, cmd, env)
    assert done.returncode == 0, done.stdout + done.stderr
    got = tickets(done.stdout)
    assert [(rank, size) for rank, size, _, _ in got] == [(0, 3), (1, 3), (2, 3)], done.stdout + done.stderr
    assert all(formed.startswith(via) for _, _, formed, _ in got), done.stdout
    assert sorted(ticket for *_, ticket in got) == [0, 1, 2], done.stdout


@pytest.mark.timeout(120)
def test_srun_without_pmi_refuses(slurm_cluster: SlurmCluster, tmp_path: Path) -> None:
    env = without_mpi4py(tmp_path)
    done = job(slurm_cluster, ["srun", "-N", "2", "-n", "2", "--mpi=none", sys.executable, str(SCRIPT), "tickets"],
               env)
    text = done.stdout + done.stderr
    assert done.returncode != 0, text
    assert "TICKET" not in done.stdout, text
    # Every rank refuses, naming what it found and the way that works.
    assert text.count("srun --mpi=pmi2") >= 2 and "SLURM_PROCID" in text, text
