"""Ranks on several hosts: simulated hosts (tests/hosts/netns.py: network
namespaces with their own hostnames and addresses on one bridge) with ranks
placed by MPICH's mpiexec and by onesided's launcher, both through
tools/netns-rsh as their remote shell.

tests/ranks/multihost.py checks atomics, locks, put/get and ordering across
the hosts, and that the default choice never takes shared memory between
them. Needs root (CI runs as root); skipped with the reason otherwise.
What the simulation proves and does not: docs/multihost.md.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import RANKS, mpiexec
from hosts.netns import SimulatedHosts, sweep_stale, unavailable
from no_mpi4py import without_mpi4py
from test_mpi_job import tickets
from onesided.run._spawn import finish

README = Path(__file__).resolve().parents[1] / "README.md"
TIMEOUT = 90

UNAVAILABLE = unavailable()
pytestmark = pytest.mark.skipif(UNAVAILABLE is not None, reason=str(UNAVAILABLE))


@pytest.fixture(scope="module")
def hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimulatedHosts]:
    """Three simulated hosts for the module; removed even when a test fails."""
    sweep_stale()  # what a killed earlier run left behind
    simulated = SimulatedHosts(3, tmp_path_factory.mktemp("netns"))
    try:
        with simulated:
            yield simulated
    finally:
        left = simulated.leftovers()
        assert not left, f"simulated hosts left behind: {left}"


def run(cmd: list[str], hosts: SimulatedHosts, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run a launcher in its own session; fail the test (its ranks killed) on timeout."""
    full_env = {**os.environ, **hosts.env(), **(env or {})}
    full_env.pop("ONESIDED_TEST_PROVIDER", None)  # the default choice is what is tested
    full_env.pop("PYTHONUNBUFFERED", None)  # unbuffered, two ranks' print()s interleave within a line
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env, start_new_session=True
    )
    out, err, expired = finish(proc, TIMEOUT)
    if expired:
        pytest.fail(f"{' '.join(cmd)} timed out after {TIMEOUT} s\nstdout:\n{out}\nstderr:\n{err}")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def mpiexec_on(hosts: SimulatedHosts, placement: str, n: int) -> list[str]:
    """MPICH's mpiexec placing ``n`` ranks on ``placement`` through netns-rsh.
    -iface: the proxies on the hosts reach mpiexec at the bridge's address
    (this machine's hostname resolves to 127.0.0.1)."""
    return [
        mpiexec(), "-launcher", "rsh", "-launcher-exec", hosts.rsh, "-iface", hosts.bridge,
        "-hosts", placement, "-n", str(n),
    ]


def placed(out: str) -> dict[int, str]:
    line = next(line for line in out.splitlines() if line.startswith("HOSTS "))
    return {int(r): h for r, h in (item.split("=") for item in line.split()[1:])}


def check_passed(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 0, f"exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert "PASS multihost" in proc.stdout, proc.stdout
    assert "LITMUS raw" in proc.stdout and "violations=0" in proc.stdout, proc.stdout
    print(proc.stdout)


def test_mpiexec_three_hosts(hosts: SimulatedHosts) -> None:
    names = [h.name for h in hosts.hosts]
    cmd = mpiexec_on(hosts, ",".join(names), 3) + [sys.executable, "-m", "mpi4py", str(RANKS / "multihost.py")]
    proc = run(cmd, hosts, {"ONESIDED_TEST_COMM": "mpi"})
    check_passed(proc)
    assert placed(proc.stdout) == {r: f"{h.name}@{h.address}" for r, h in enumerate(hosts.hosts)}


def test_mpiexec_two_ranks_per_host(hosts: SimulatedHosts) -> None:
    """4 ranks on 2 hosts: across hosts the provider; within one, shared memory."""
    a, b = hosts.hosts[0], hosts.hosts[1]
    cmd = mpiexec_on(hosts, f"{a.name}:2,{b.name}:2", 4) + [sys.executable, "-m", "mpi4py", str(RANKS / "multihost.py")]
    proc = run(cmd, hosts, {"ONESIDED_TEST_COMM": "mpi"})
    check_passed(proc)
    on_a, on_b = f"{a.name}@{a.address}", f"{b.name}@{b.address}"
    assert placed(proc.stdout) == {0: on_a, 1: on_a, 2: on_b, 3: on_b}
    assert proc.stdout.count("SAME-HOST") == 2 and "path=shared-memory" in proc.stdout


def test_default_choice_ignores_hostnames(hosts: SimulatedHosts) -> None:
    """Every host named alike: ranks on different hosts still never share
    memory (the host key is not the hostname), ranks of one host still do."""
    a, b = hosts.hosts[0].address, hosts.hosts[1].address
    cmd = mpiexec_on(hosts, f"{a}:2,{b}:2", 4) + [sys.executable, "-m", "mpi4py", str(RANKS / "multihost.py")]
    proc = run(cmd, hosts, {"ONESIDED_TEST_COMM": "mpi", **hosts.env(hostname="samehost")})
    check_passed(proc)
    assert placed(proc.stdout) == {0: f"samehost@{a}", 1: f"samehost@{a}", 2: f"samehost@{b}", 3: f"samehost@{b}"}
    assert proc.stdout.count("SAME-HOST") == 2


def launcher(hosts: SimulatedHosts, placement: str, n: int, *args: str) -> list[str]:
    """onesided's launcher placing ``n`` ranks on ``placement`` through netns-rsh."""
    return [
        sys.executable, "-m", "onesided", "run", "-n", str(n), "--hosts", placement, "--rsh", hosts.rsh,
        "--timeout", str(TIMEOUT - 15), *args,
    ]


def test_launcher_three_hosts(hosts: SimulatedHosts) -> None:
    """The launcher's coordinator listens on the address the hosts route to
    (found from their addresses), and every check passes across them."""
    addresses = [h.address for h in hosts.hosts]
    proc = run(launcher(hosts, ",".join(addresses), 3, str(RANKS / "multihost.py")), hosts)
    check_passed(proc)
    assert placed(proc.stdout) == {r: f"{h.name}@{h.address}" for r, h in enumerate(hosts.hosts)}


def test_launcher_carries_environment_cwd_and_output(hosts: SimulatedHosts, tmp_path: Path) -> None:
    """Environment, working directory and both output streams of every
    rank, and FI_TCP_IFACE set to the interface toward the coordinator."""
    names = [h.name for h in hosts.hosts]
    cmd = launcher(hosts, f"{names[1]}:2,{names[2]}", 3, "--coordinator", hosts.gateway, str(RANKS / "multihost_job.py"))
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path,
        env=dict(os.environ, **hosts.env(), ONESIDED_TEST_MARK="carried"),
    )
    assert proc.returncode == 0, proc.stderr
    lines = sorted(line for line in proc.stdout.splitlines() if line.startswith("RANK "))
    assert lines == [
        f"RANK {r} host={h} cwd={tmp_path} mark=carried iface=eth0"
        for r, h in enumerate([names[1], names[1], names[2]])
    ]
    assert sorted(line for line in proc.stderr.splitlines() if line.startswith("STDERR ")) == [
        f"STDERR {r}" for r in range(3)
    ]


def test_launcher_stops_every_host_when_a_rank_dies(hosts: SimulatedHosts, tmp_path: Path) -> None:
    """The last rank exits 3 on one host; the ranks waiting on the other
    hosts are stopped, the job exits 3 naming the rank and its host, and no
    process is left in any simulated host. The hosts come from a hostfile."""
    names = [h.name for h in hosts.hosts]
    hostfile = tmp_path / "hosts"
    hostfile.write_text(f"# three simulated hosts\n{names[0]}\n{names[1]} slots=1\n{names[2]}:1\n")
    cmd = launcher(hosts, "", 3, "--coordinator", hosts.gateway, str(RANKS / "multihost_job.py"), "fail")
    cmd[cmd.index("--hosts") : cmd.index("--hosts") + 2] = ["--hostfile", str(hostfile)]
    proc = run(cmd, hosts)
    assert proc.returncode == 3, proc.stderr
    assert f"rank 2 (on {names[2]}) exited with status 3; stopping the other 2 ranks" in proc.stderr, proc.stderr
    assert hosts.processes() == {}


def test_ten_lines_across_hosts_span_the_mpi_job(hosts: SimulatedHosts, tmp_path: Path) -> None:
    """The README's example as printed (no comm=) under mpiexec on two
    hosts: onesided.COMM_WORLD is mpi4py's, so the tickets are one job's,
    not each rank's own "0" (onesided.comm._mpi_job)."""
    script = tmp_path / "ten_lines.py"
    script.write_text(re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)[0])
    a, b = hosts.hosts[0].name, hosts.hosts[1].name
    proc = run(mpiexec_on(hosts, f"{a},{b}", 2) + [sys.executable, str(script)], hosts)
    assert proc.returncode == 0, proc.stderr
    got = tickets(proc.stdout)
    assert [rank for rank, _ in got] == [0, 1] and sorted(t for _, t in got) == [0, 1], proc.stdout


def test_pmi_world_across_hosts_without_mpi4py(hosts: SimulatedHosts, tmp_path: Path) -> None:
    """mpi4py hidden: the world is formed through hydra's PMI wire, rank 1
    reaching rank 0's coordinator through loopback on its host, rank 2 from
    another host at one of rank 0's published addresses
    (onesided.comm._pmi_world)."""
    a, b = hosts.hosts[0].name, hosts.hosts[1].name
    env = without_mpi4py(tmp_path, {})
    proc = run(mpiexec_on(hosts, f"{a}:2,{b}", 3) + [sys.executable, str(RANKS / "pmi_world.py"), "tickets"], hosts,
               env={"PYTHONPATH": env["PYTHONPATH"]})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = re.findall(r"^RANK (\d+) SIZE 3 VIA PMI-1 wire on PMI_FD TICKET (\d+)$", proc.stdout, flags=re.M)
    assert sorted(int(r) for r, _ in lines) == [0, 1, 2], proc.stdout + proc.stderr
    assert sorted(int(t) for _, t in lines) == [0, 1, 2], proc.stdout


@pytest.fixture
def docker0_hosts(tmp_path: Path) -> Iterator[SimulatedHosts]:
    """Two hosts that each also carry a host-local interface with one and the
    same address (docker0 on a host without containers: a bridge without
    ports), so an address published on it leads every peer back to itself."""
    simulated = SimulatedHosts(2, tmp_path, index=1)  # beside the module's hosts
    try:
        with simulated:
            for host in simulated.hosts:
                simulated.add_interface(host, "docker0", "172.31.99.1/24")
            yield simulated
    finally:
        assert not simulated.leftovers()


def test_wrong_interface_raises_instead_of_hanging(docker0_hosts: SimulatedHosts) -> None:
    """libfabric's tcp provider on the host-local interface (FI_TCP_IFACE
    points there, as libfabric's own ranking may): window creation raises
    at every rank, naming the peer, its address and interface, and
    FI_TCP_IFACE, within ONESIDED_CONNECT_TIMEOUT, instead of every rank
    blocking in its first epoch."""
    a, b = docker0_hosts.hosts
    cmd = mpiexec_on(docker0_hosts, f"{a.name},{b.name}", 2) + [
        sys.executable, "-m", "mpi4py", str(RANKS / "multihost.py"),
    ]
    proc = run(cmd, docker0_hosts, {"ONESIDED_TEST_COMM": "mpi", "FI_TCP_IFACE": "docker0",
                                    "ONESIDED_CONNECT_TIMEOUT": "3"})
    assert proc.returncode != 0 and "PASS" not in proc.stdout
    error = next(line for line in proc.stderr.splitlines() if line.startswith("onesided._errors.TransportError"))
    print(error)
    assert f"rank 0 (on {a.name}) could not reach within 3 s rank 1 (on {b.name}): rank 1 listens at 172.31.99.1:" in error
    assert f"on its interface docker0, an address {a.name} has too (its docker0)" in error
    assert "set FI_TCP_IFACE to the interface that connects the hosts" in error
    assert "eth0 " in error  # the interface to choose is listed


def test_teardown_removes_everything_even_with_processes_left(tmp_path: Path) -> None:
    """down() (what the fixtures run, also after a failure) kills what still
    runs in the hosts and removes every namespace, veth and bridge; a run
    killed before its teardown is swept by the next one (by owner pid)."""
    simulated = SimulatedHosts(2, tmp_path, index=2)
    with simulated:
        env = {**os.environ, **simulated.env()}
        stray = subprocess.Popen([simulated.rsh, simulated.hosts[1].name, "exec", "sleep", "600"], env=env,
                                 start_new_session=True)
        while not simulated.processes():  # the sleep is in the host once netns-rsh has exec'd it
            assert stray.poll() is None
        assert simulated.leftovers()
    assert simulated.leftovers() == [] and stray.wait(timeout=10) == -9

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()  # a pid that no longer runs: a killed test run
    dead = f"{child.pid}s0"
    subprocess.run(["ip", "netns", "add", f"onesided-host-{dead}-0"], check=True)
    subprocess.run(["ip", "link", "add", f"osh{dead}br", "type", "bridge"], check=True)
    assert sorted(sweep_stale()) == sorted([f"onesided-host-{dead}-0", f"osh{dead}br"])


def test_malformed_connect_timeout_fails_every_rank(hosts: SimulatedHosts) -> None:
    a, b = hosts.hosts[0].name, hosts.hosts[1].name
    cmd = mpiexec_on(hosts, f"{a},{b}", 2) + [sys.executable, "-m", "mpi4py", str(RANKS / "multihost.py")]
    proc = run(cmd, hosts, {"ONESIDED_TEST_COMM": "mpi", "ONESIDED_CONNECT_TIMEOUT": "soon"})
    assert proc.returncode != 0 and "PASS" not in proc.stdout
    errors = [line for line in proc.stderr.splitlines() if line.startswith("onesided._errors.TransportError")]
    # Every rank raises it; mpi4py's runner may abort a rank before it prints.
    assert errors and all("ONESIDED_CONNECT_TIMEOUT=soon is not a number of seconds" in e for e in errors), proc.stderr
