"""No silent one-rank worlds: a process that is one rank of an MPI job
(by its environment) and creates a window over onesided.COMM_WORLD gets
mpi4py's COMM_WORLD (onesided.comm._mpi_job), or, without mpi4py, a world
formed through the launcher's PMI (onesided.comm._pmi_world; its own tests
are tests/test_pmi_world.py). Both paths under MPICH's real mpiexec, with
the README's ten-line example as printed (no comm=)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import mpiexec
from no_mpi4py import run_job, without_mpi4py
from onesided.comm._mpi_job import mpi_job

README = Path(__file__).resolve().parents[1] / "README.md"
TEN_LINES = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)[0]


@pytest.mark.parametrize(
    "environ, job",
    [
        ({}, None),
        ({"PMI_RANK": "1", "PMI_SIZE": "2"}, "PMI_RANK=1 PMI_SIZE=2"),
        ({"PMI_RANK": "0", "PMI_SIZE": "1"}, None),  # a job of one rank is one rank
        ({"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4"}, "OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_SIZE=4"),
        ({"PMIX_RANK": "2"}, "PMIX_RANK=2"),
        ({"SLURM_PROCID": "1", "SLURM_STEP_NUM_TASKS": "8"}, "SLURM_PROCID=1 SLURM_STEP_NUM_TASKS=8"),
        ({"SLURM_PROCID": "0", "SLURM_NTASKS": "8"}, None),  # a batch script: no job step
    ],
)
def test_mpi_job_from_environment(environ: dict[str, str], job: str | None) -> None:
    assert mpi_job(environ) == job


def run_ten_lines(tmp_path: Path, n: int, hide_mpi4py: bool) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "ten_lines.py"
    script.write_text(TEN_LINES)
    env = dict(os.environ)
    # Unbuffered, print writes each piece at once and two ranks' lines interleave.
    env.pop("PYTHONUNBUFFERED", None)
    if hide_mpi4py:
        env = without_mpi4py(tmp_path, env)
    return run_job([mpiexec(), "-n", str(n), sys.executable, str(script)], env, 90)


def tickets(stdout: str) -> list[tuple[int, int]]:
    """(rank, ticket) of every "R got ticket T" line, sorted."""
    return sorted((int(r), int(t)) for r, t in re.findall(r"^(\d+) got ticket (\d+)$", stdout, flags=re.M))


def test_ten_lines_under_mpiexec_use_mpi4py(tmp_path: Path) -> None:
    proc = run_ten_lines(tmp_path, 3, hide_mpi4py=False)
    assert proc.returncode == 0, proc.stderr
    got = tickets(proc.stdout)
    assert [rank for rank, _ in got] == [0, 1, 2], proc.stdout
    assert sorted(ticket for _, ticket in got) == [0, 1, 2], proc.stdout


def test_ten_lines_under_mpiexec_without_mpi4py_use_its_pmi(tmp_path: Path) -> None:
    """The same job with mpi4py hidden: the world spans it all the same,
    formed through hydra's PMI wire (a world of one per rank would give
    every rank ticket 0)."""
    proc = run_ten_lines(tmp_path, 3, hide_mpi4py=True)
    assert proc.returncode == 0, proc.stderr
    got = tickets(proc.stdout)
    assert [rank for rank, _ in got] == [0, 1, 2], proc.stdout + proc.stderr
    assert sorted(ticket for _, ticket in got) == [0, 1, 2], proc.stdout


def test_comm_world_is_mpi4pys_under_mpiexec() -> None:
    """onesided.COMM_WORLD is MPI.COMM_WORLD (not a stand-in), after import
    onesided left MPI uninitialised; MPI.Win.Allocate, allreduce, Split,
    Get_group, Dup and onesided's windows all take it (ranks/mpi_world.py)."""
    script = Path(__file__).parent / "ranks" / "mpi_world.py"
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    done = run_job([mpiexec(), "-n", "3", sys.executable, str(script)], env, 120)
    assert done.returncode == 0, done.stderr
    assert sorted(re.findall(r"^PASS (\d+)$", done.stdout, flags=re.M)) == ["0", "1", "2"], done.stdout + done.stderr
