"""Shared machinery for tests that run real ranks in real processes.

Every multi-rank test goes through run_ranks(), which starts the ranks under
onesided's launcher or under MPICH's mpiexec (mpi4py's COMM_WORLD then is the
window's group), with a hard timeout that kills the whole process group.
MPICH's launcher is mpiexec.mpich, not the plain mpiexec alternative, which
becomes Open MPI's once Debian's Open MPI is installed beside it (mpi4py in
.venv is built against MPICH): see mpiexec() below.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

# Every process the suite starts (and this one) prints a faulting thread's
# native frames before it dies of the signal: a segfault in a thread the
# interpreter does not know shows nothing else (docs/semantics.md, "A rank
# that faults"). Set before onesided is imported here.
os.environ.setdefault("ONESIDED_NATIVE_BACKTRACE", "1")

from cluster.slurm import SlurmCluster
from onesided.run._spawn import finish

RANKS = Path(__file__).parent / "ranks"
LAUNCHERS = ["onesided", "mpiexec"]
PROVIDERS = ["shm", "tcp;ofi_rxm"]


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (Linux); a zombie waiting for init counts as gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        # Gone before the open, or between the open and the read (ESRCH).
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


def mpiexec() -> str:
    """MPICH's launcher, for the MPI mpi4py in .venv is built against: Debian
    installs it as mpiexec.mpich, and the plain mpiexec is an alternative that
    points at Open MPI once Debian's Open MPI is installed too, so the plain
    name is used only when there is no mpiexec.mpich (an MPICH installed
    elsewhere). Fails the test when there is neither."""
    path = shutil.which("mpiexec.mpich") or shutil.which("mpiexec")
    if path is None:
        pytest.fail("mpiexec.mpich not found: `make test` installs Debian's mpich")
    return path


def provider_id(p: str) -> str:
    return p.split(";")[0]


def run_ranks(
    script: str,
    n: int,
    *args: str,
    launcher: str = "onesided",
    provider: str | None = "shm",
    timeout: float = 120,
    env: dict[str, str] | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    """Run tests/ranks/<script> on n ranks; fail the test on timeout (after
    killing every rank) or, when check is set, on a non-zero exit."""
    path = str(RANKS / script)
    if launcher == "onesided":
        # The launcher stops every rank (each runs in its own session) when
        # the job outlives --timeout; the deadline below is a backstop.
        cmd = [sys.executable, "-m", "onesided", "run", "-n", str(n), "--timeout", str(timeout), path, *args]
    elif launcher == "mpiexec":
        # "-m mpi4py" aborts the job on an uncaught exception instead of
        # hanging in MPI_Finalize while the other ranks wait.
        cmd = [mpiexec(), "-n", str(n), sys.executable, "-m", "mpi4py", path, *args]
    else:
        raise ValueError(launcher)
    full_env = dict(os.environ)
    full_env["ONESIDED_TEST_COMM"] = "mpi" if launcher == "mpiexec" else "onesided"
    full_env.pop("ONESIDED_TEST_PROVIDER", None)
    if provider:
        full_env["ONESIDED_TEST_PROVIDER"] = provider
    full_env.update(env or {})
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env, start_new_session=True
    )
    out, err, expired = finish(proc, timeout + 15)
    if expired or (launcher == "onesided" and proc.returncode == 124):
        pytest.fail(f"{script} {' '.join(args)} timed out after {timeout} s\nstdout:\n{out}\nstderr:\n{err}")
    result = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
    if check and proc.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} exited {proc.returncode}\nstdout:\n{out}\nstderr:\n{err}")
    return result


class Lines:
    """A child's stdout, line by line, read by a thread (with a deadline)."""

    def __init__(self, stream, deadline: float = 60.0) -> None:
        self.deadline = deadline
        self.queue: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream) -> None:
        for line in stream:
            self.queue.put(line.rstrip("\n"))
        self.queue.put(None)

    def rest(self) -> str:
        """Everything, once the child has exited (its stdout is at its end)."""
        while (line := self.queue.get(timeout=self.deadline)) is not None:
            self.seen.append(line)
        return "\n".join(self.seen)

    def expect(self, pattern: str) -> re.Match[str]:
        """The first line so far or to come that matches (ranks' lines
        arrive in any order)."""
        for line in self.seen:
            if m := re.search(pattern, line):
                return m
        end = time.monotonic() + self.deadline
        while time.monotonic() < end:
            try:
                line = self.queue.get(timeout=max(0.0, end - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                break
            self.seen.append(line)
            if m := re.search(pattern, line):
                return m
        raise AssertionError(f"no line matching {pattern!r}; output so far:\n" + "\n".join(self.seen))


def reap(proc: subprocess.Popen[str], lines: Lines) -> tuple[str, str]:
    """Kill what is left of ``proc``'s group (a job the test gave up on), then
    its whole stdout and stderr."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return lines.rest(), proc.stderr.read()


@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    """A real Slurm of three nodes on simulated hosts (tests/cluster/slurm.py),
    shared by the session's Slurm tests; every daemon stopped and waited
    for, and the hosts removed, at the end. Skipped, with the reason, where
    Slurm or network namespaces are missing."""
    from cluster.slurm import unavailable
    from hosts.netns import sweep_stale

    reason = unavailable()
    if reason is not None:
        pytest.skip(reason)
    sweep_stale()  # what a killed earlier run left behind
    cluster = SlurmCluster(3, tmp_path_factory.mktemp("slurm"))
    with cluster:
        yield cluster
    left = cluster.simulated.leftovers()
    assert not left, f"the Slurm cluster's hosts were left behind: {left}"
