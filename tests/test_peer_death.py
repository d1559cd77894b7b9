"""Death across hosts (issue 25, item 4): a rank on another (simulated)
host is SIGKILLed, or its host's link is taken down, while the other ranks
wait on it; nothing stops the survivors (plain processes around onesided's
coordinator, as test_faults' unsupervised case on one host), so each must
raise by itself, naming the rank and its host, within 5 s. A rank that is
merely busy in Python holding the GIL, or stopped by SIGSTOP, for longer
than the peer timeout is not declared dead.

tests/ranks/peer_death.py is the rank program; peers/liveness.hpp the
detector; docs/multihost.md says what it detects, how fast, at what cost.
Needs root (network namespaces); skipped with the reason otherwise.
"""

from __future__ import annotations

import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import onesided
from conftest import RANKS
from hosts.netns import Host, SimulatedHosts, sweep_stale, unavailable
from onesided.comm._coordinator import Coordinator
from test_faults import leftovers

UNAVAILABLE = unavailable()
pytestmark = pytest.mark.skipif(UNAVAILABLE is not None, reason=str(UNAVAILABLE))

LIMIT = 5.0  # seconds from a death to every survivor's error (issue 25)
STOPPED = 8.0  # seconds the stop case holds rank 1: over twice the peer timeout
TIMEOUT = 90  # a job that takes longer has hung: its ranks are killed

STATES = ["lock", "flush", "request", "request_test", "waitall", "pscw", "notify", "fence"]
# The states where only rank 1's Python can end the wait (its progress
# thread serves flushes and requests whatever its Python does).
WAITS_ON_PYTHON = ["lock", "pscw", "notify", "fence"]


@pytest.fixture(scope="module")
def hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimulatedHosts]:
    sweep_stale()
    simulated = SimulatedHosts(3, tmp_path_factory.mktemp("netns"), index=2)
    try:
        with simulated:
            yield simulated
    finally:
        assert not simulated.leftovers(), "simulated hosts left behind"


class Job:
    """Ranks placed on `placement` (a host per rank), each started through
    the simulated hosts' remote shell around one coordinator."""

    def __init__(self, hosts: SimulatedHosts, placement: list[Host], state: str, mode: str) -> None:
        token = secrets.token_hex(16)
        self.hosts = hosts
        self.placement = placement
        self.coordinator = Coordinator(len(placement), token.encode("ascii"), host=hosts.gateway)
        self.procs: list[subprocess.Popen[str]] = []
        self.lines: list[list[str]] = [[] for _ in placement]
        self.readers: list[threading.Thread] = []
        self.coordinator.__enter__()
        for rank, host in enumerate(placement):
            env = dict(os.environ, **hosts.env(), ONESIDED_COORD=self.coordinator.address, ONESIDED_RANK=str(rank))
            env.update(ONESIDED_SIZE=str(len(placement)), ONESIDED_TOKEN=token, ONESIDED_TEST_COMM="onesided")
            env.pop("ONESIDED_TEST_PROVIDER", None)  # the default choice across hosts is what is tested
            env["PYTHONPATH"] = os.pathsep.join([str(RANKS), *filter(None, [env.get("PYTHONPATH")])])
            words = [sys.executable, str(RANKS / "peer_death.py"), state, mode]
            proc = subprocess.Popen(
                [hosts.rsh, host.name, *words], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, text=True, env=env,
            )
            self.procs.append(proc)
            reader = threading.Thread(target=self._read, args=(rank,), daemon=True)
            reader.start()
            self.readers.append(reader)

    def _read(self, rank: int) -> None:
        stream = self.procs[rank].stdout
        assert stream is not None
        for line in stream:
            self.lines[rank].append(line.rstrip("\n"))

    def wait_for_line(self, rank: int, prefix: str | tuple[str, ...]) -> None:
        """Until rank `rank` printed a line starting with `prefix` (or ended)."""
        deadline = time.monotonic() + TIMEOUT
        while not any(line.startswith(prefix) for line in self.lines[rank]):
            if self.procs[rank].poll() is not None and not self.readers[rank].is_alive():
                pytest.fail(f"rank {rank} ended before printing {prefix}\n{self.text()}")
            if time.monotonic() > deadline:
                self.close()
                pytest.fail(f"rank {rank} never printed {prefix}\n{self.text()}")
            self.readers[rank].join(0.02)  # a bounded wait for its next line

    def finish(self) -> None:
        """Every survivor's verdict, then every rank ended; killed (and the
        test failed) after TIMEOUT."""
        for rank in range(len(self.placement)):
            if rank != 1:
                self.wait_for_line(rank, ("RAISED", "WAITED"))
        for proc in self.procs:
            if proc.stdin:
                proc.stdin.close()  # a survivor that raised leaves now
        deadline = time.monotonic() + TIMEOUT
        for proc in self.procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.close()
                pytest.fail(f"a rank did not end\n{self.text()}")
        for reader in self.readers:
            reader.join(10)
        self.close()

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            if proc.stdin and not proc.stdin.closed:
                proc.stdin.close()
        self.coordinator.__exit__(None, None, None)

    def text(self) -> str:
        return "\n".join(f"rank {r} on {h.name}:\n" + "\n".join(self.lines[r]) for r, h in enumerate(self.placement))

    def found(self, rank: int, pattern: str) -> list[str]:
        return [m for line in self.lines[rank] if (m := re.match(pattern, line))]  # type: ignore[misc]


def survivors_raised(job: Job, since: float, named: str) -> None:
    """Every rank but 1 raised a TransportError matching `named` within LIMIT of `since`."""
    for rank in range(len(job.placement)):
        if rank == 1:
            continue
        survivor = job.found(rank, r"^SURVIVOR (.*)$")
        raised = job.found(rank, r"^RAISED ([0-9.]+)$")
        assert survivor and raised, job.text()
        delay = float(raised[0].group(1)) - since  # type: ignore[attr-defined]
        print(f"rank {rank}: {survivor[0].group(1)}\n  raised {delay:.2f} s after")  # type: ignore[attr-defined]
        assert re.match(named, survivor[0].group(1)), job.text()  # type: ignore[attr-defined]
        assert delay < LIMIT, f"rank {rank} raised {delay:.1f} s after\n{job.text()}"


def dead_rank_1(job: Job, how: str) -> str:
    """What a survivor's error says of rank 1 on its host: the window's
    TransportError, or (a fence's barrier) the coordinator's WorldError."""
    victim = job.placement[1]
    return (
        rf"(TransportError: rank 1 \(pid \d+ on host {victim.name}\) {how}"
        rf"|WorldError: barrier #\d+ failed: rank 1 \(at {re.escape(victim.address)}\) )"
    )


@pytest.mark.parametrize("state", STATES)
def test_killed_rank_on_another_host_is_named_by_every_survivor(hosts: SimulatedHosts, state: str) -> None:
    """Three ranks, one per host; rank 1 is SIGKILLed: its kernel resets the
    liveness connections, so survivors raise within 5 s (at the next look,
    every 100 ms of waiting)."""
    job = Job(hosts, hosts.hosts, state, "kill")
    job.finish()
    kills = [float(m.group(1)) for m in job.found(1, r"^KILL ([0-9.]+)$")]  # type: ignore[attr-defined]
    assert kills, job.text()
    survivors_raised(job, kills[0], dead_rank_1(job, "has died"))
    onesided._core.remove_stale_shared_memory()
    assert leftovers([m.group(1) for r in range(3) for m in job.found(r, r"^PID (\d+)$")]) == []  # type: ignore[attr-defined]
    assert hosts.processes() == {}


@pytest.mark.parametrize("state", ["lock", "flush", "request", "pscw", "notify", "fence"])
def test_cut_off_host_is_named_by_every_survivor(hosts: SimulatedHosts, state: str) -> None:
    """Rank 1's host loses its link (eth0 down in its namespace): its kernel
    answers nothing any more, so after the peer timeout (3 s) without a
    keepalive answer every survivor raises, within 5 s of the cut, naming
    rank 1 and its host; rank 1 finds its peers unreachable alike."""
    job = Job(hosts, hosts.hosts, state, "cut")
    try:
        job.wait_for_line(1, "CUT")
        subprocess.run(["ip", "-n", hosts.hosts[1].namespace, "link", "set", "eth0", "down"], check=True)
        cut = time.time()
        job.finish()
    finally:
        job.close()
        subprocess.run(["ip", "-n", hosts.hosts[1].namespace, "link", "set", "eth0", "up"], check=False)
        subprocess.run(["ip", "-n", hosts.hosts[1].namespace, "route", "replace", "default", "via", hosts.gateway],
                       check=False)
    survivors_raised(job, cut, dead_rank_1(job, "is unreachable"))
    victim = job.found(1, r"^VICTIM (.*)$")
    assert victim, job.text()
    assert re.match(r"TransportError: rank [02] \(pid \d+ on host simhost[02]\) is unreachable", victim[0].group(1))  # type: ignore[attr-defined]
    assert hosts.processes() == {}


def test_killed_rank_on_this_host_in_a_window_across_hosts(hosts: SimulatedHosts) -> None:
    """Ranks 0 and 1 on one host, rank 2 on another: rank 0 watches rank 1
    by its pid, rank 2 by the liveness connection; both name it."""
    a, b = hosts.hosts[0], hosts.hosts[1]
    job = Job(hosts, [a, a, b], "request", "kill")
    job.finish()
    kills = [float(m.group(1)) for m in job.found(1, r"^KILL ([0-9.]+)$")]  # type: ignore[attr-defined]
    assert kills, job.text()
    survivors_raised(job, kills[0], r"TransportError: rank 1 \(pid \d+( on host simhost0\))?")
    assert job.found(0, r"^SURVIVOR TransportError: rank 1 \(pid \d+\) has died"), job.text()
    assert job.found(2, r"^SURVIVOR TransportError: rank 1 \(pid \d+ on host simhost0\) has died"), job.text()


@pytest.mark.parametrize("state", WAITS_ON_PYTHON)
def test_busy_rank_is_not_declared_dead(hosts: SimulatedHosts, state: str) -> None:
    """Rank 1 holds the GIL in a Python loop for 8 s (over twice the peer
    timeout) before doing what the survivors wait for: they wait it out."""
    job = Job(hosts, hosts.hosts, state, "busy")
    job.finish()
    for rank in (0, 2):
        waited = job.found(rank, r"^WAITED ([0-9.]+)$")
        assert job.found(rank, r"^SURVIVOR finished without error$") and waited, job.text()
        print(f"rank {rank} waited {waited[0].group(1)} s for busy rank 1 ({state})")  # type: ignore[attr-defined]
        assert float(waited[0].group(1)) > 7.0, job.text()  # type: ignore[attr-defined]  # it did wait on rank 1


def test_stopped_rank_is_not_declared_dead(hosts: SimulatedHosts) -> None:
    """Rank 1 stopped by SIGSTOP for 8 s while holding rank 0's lock: its
    kernel still answers, so nobody calls it dead; after SIGCONT the lock
    passes on."""
    job = Job(hosts, hosts.hosts, "lock", "stop")
    try:
        job.wait_for_line(1, "HOLD")
        victim = job.procs[1]
        victim.send_signal(signal.SIGSTOP)
        stopped = time.monotonic()
        # The length of the stop is what is tested, not a synchronisation.
        while time.monotonic() - stopped < STOPPED:
            job.readers[0].join(0.5)
        victim.send_signal(signal.SIGCONT)
        assert victim.stdin is not None
        victim.stdin.write("go\n")
        victim.stdin.flush()
        job.finish()
    finally:
        job.close()
    for rank in (0, 2):
        waited = job.found(rank, r"^WAITED ([0-9.]+)$")
        assert job.found(rank, r"^SURVIVOR finished without error$") and waited, job.text()
        print(f"rank {rank} waited {waited[0].group(1)} s for stopped rank 1")  # type: ignore[attr-defined]
        assert float(waited[0].group(1)) > STOPPED - 1, job.text()  # type: ignore[attr-defined]  # through the stop
