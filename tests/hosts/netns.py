"""Simulated hosts: Linux network namespaces on one bridge.

Each host is a network namespace with its own veth pair to a bridge in the
caller's namespace, its own address on a private /24, and its own hostname
(tools/netns-rsh starts every command in a UTS namespace of its own). The
caller (the launcher, mpiexec) stays in its namespace and reaches the hosts
through the bridge, whose address is the hosts' default route.

What this proves and what it does not: the hosts share one kernel, one
/dev/shm, one pid and one IPC namespace, so shared memory would "work"
between them; they differ in network namespace, which is part of onesided's
host key (cpp/src/memory/host_identity.hpp), so the default choice must
treat them as different hosts and go through the network provider. Network
paths, addresses, interface choice, remote start and output forwarding are
real; NIC speed, clock skew and a real second kernel are not.

Every object carries the owning process's pid in its name
(``onesided-host-<pid>s<set>-<i>``, ``osh<pid>s<set>br``, ``osh<pid>s<set>v<i>``), so
:func:`sweep_stale` removes what a killed test run left behind, and
:meth:`SimulatedHosts.down` removes everything even after a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Self

NETNS_PREFIX = "onesided-host-"
LINK_PREFIX = "osh"
RSH = Path(__file__).resolve().parents[2] / "tools" / "netns-rsh"

_NETNS_NAME = re.compile(rf"^{NETNS_PREFIX}(\d+)s\d+-\d+$")
_LINK_NAME = re.compile(rf"^{LINK_PREFIX}((\d+)s\d+)(br|[vp]\d+)$")


def unavailable() -> str | None:
    """Why simulated hosts cannot be made here, or None when they can."""
    if os.geteuid() != 0:
        return "simulated hosts need root (network namespaces); CI runs as root"
    for tool in ("ip", "unshare", "hostname"):
        if shutil.which(tool) is None:
            return f"simulated hosts need `{tool}` (tools/setup-debian.sh installs iproute2)"
    # Root without CAP_SYS_ADMIN (an unprivileged container) cannot make one:
    # try, with a name sweep_stale() removes should this process die here.
    name = f"{NETNS_PREFIX}{os.getpid()}s99-0"
    probe = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"`ip netns add` is unavailable here: {probe.stderr.strip()}"
    subprocess.run(["ip", "netns", "delete", name], capture_output=True, text=True)
    return None


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_namespace_processes(namespace: str) -> None:
    """SIGKILL every process still inside ``namespace`` (a failed test's ranks)."""
    pids = _ip("netns", "pids", namespace, check=False).stdout.split()
    for pid in pids:
        try:
            os.kill(int(pid), 9)
        except (ProcessLookupError, ValueError):
            pass


def _namespaces() -> list[str]:
    return [line.split()[0] for line in _ip("netns", "list").stdout.splitlines() if line.strip()]


def _links() -> list[str]:
    names = []
    for line in _ip("-o", "link", "show").stdout.splitlines():
        # "7: osh123v0@if6: <...>": the name, without the peer suffix.
        names.append(line.split(":")[1].strip().split("@")[0])
    return names


def sweep_stale() -> list[str]:
    """Remove simulated hosts whose owning process is gone; return their names."""
    removed = []
    for namespace in _namespaces():
        match = _NETNS_NAME.match(namespace)
        if match and not _alive(int(match.group(1))):
            _kill_namespace_processes(namespace)
            _ip("netns", "delete", namespace, check=False)
            removed.append(namespace)
    for link in _links():
        match = _LINK_NAME.match(link)
        if match and not _alive(int(match.group(2))):
            _ip("link", "delete", link, check=False)
            removed.append(link)
    return removed


@dataclass(frozen=True)
class Host:
    name: str  # its hostname, and its name for the remote shell
    address: str  # on eth0, its one interface besides lo
    namespace: str


class UpDown:
    """A context manager over ``up()`` and ``down()``: entering brings it
    up (and down again if that fails half-way), leaving always brings it
    down. ``down()`` must be idempotent."""

    def up(self) -> None:
        raise NotImplementedError

    def down(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        try:
            self.up()
        except BaseException:
            self.down()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.down()


class SimulatedHosts(UpDown):
    """``count`` hosts on a bridge; use as a context manager (down() always
    runs). Sets of hosts with different ``index`` may exist side by side."""

    def __init__(self, count: int, workdir: Path, index: int = 0) -> None:
        pid = os.getpid()
        self.tag = f"{pid}s{index}"
        self.bridge = f"{LINK_PREFIX}{self.tag}br"
        subnet = f"10.{231 + index}.{10 + pid % 200}"  # distinct runs on one machine rarely collide
        self.gateway = f"{subnet}.1"
        self.hosts = [
            Host(f"simhost{i}", f"{subnet}.{10 + i}", f"{NETNS_PREFIX}{self.tag}-{i}") for i in range(count)
        ]
        self.map_file = workdir / "netns-hosts"
        self.rsh = str(RSH)

    def env(self, hostname: str | None = None) -> dict[str, str]:
        """What a process that starts ranks on the hosts needs in its
        environment; with ``hostname``, every host is given that one name
        (and must be addressed by its address)."""
        if hostname is None:
            return {"ONESIDED_NETNS_MAP": str(self.map_file)}
        alias = self.map_file.with_name(f"{self.map_file.name}-{hostname}")
        alias.write_text("".join(f"{hostname} {h.address} {h.namespace}\n" for h in self.hosts))
        return {"ONESIDED_NETNS_MAP": str(alias)}

    def up(self) -> None:
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        for i, host in enumerate(self.hosts):
            outside, inside = f"{LINK_PREFIX}{self.tag}v{i}", f"{LINK_PREFIX}{self.tag}p{i}"
            _ip("netns", "add", host.namespace)
            _ip("link", "add", outside, "type", "veth", "peer", "name", inside)
            _ip("link", "set", inside, "netns", host.namespace)
            _ip("link", "set", outside, "master", self.bridge)
            _ip("link", "set", outside, "up")
            _ip("-n", host.namespace, "link", "set", inside, "name", "eth0")
            _ip("-n", host.namespace, "addr", "add", f"{host.address}/24", "dev", "eth0")
            _ip("-n", host.namespace, "link", "set", "eth0", "up")
            _ip("-n", host.namespace, "link", "set", "lo", "up")
            _ip("-n", host.namespace, "route", "add", "default", "via", self.gateway)
        self.map_file.write_text("".join(f"{h.name} {h.address} {h.namespace}\n" for h in self.hosts))

    def add_interface(self, host: Host, name: str, address: str) -> None:
        """Give ``host`` a host-local interface with ``address``: a bridge
        without ports, as docker0 is on a host without containers."""
        _ip("-n", host.namespace, "link", "add", name, "type", "bridge")
        _ip("-n", host.namespace, "addr", "add", address, "dev", name)
        _ip("-n", host.namespace, "link", "set", name, "up")

    def down(self) -> None:
        """Remove every namespace, link and process of these hosts (idempotent)."""
        for host in self.hosts:
            if host.namespace in _namespaces():
                _kill_namespace_processes(host.namespace)
                _ip("netns", "delete", host.namespace, check=False)
        links = _links()
        for link in links:
            match = _LINK_NAME.match(link)
            if match and match.group(1) == self.tag:
                _ip("link", "delete", link, check=False)

    def processes(self) -> dict[str, list[str]]:
        """The pids still running in each host that has any."""
        found = {h.name: _ip("netns", "pids", h.namespace, check=False).stdout.split() for h in self.hosts}
        return {name: pids for name, pids in found.items() if pids}

    def leftovers(self) -> list[str]:
        """Namespaces and links of these hosts that still exist."""
        mine = [ns for ns in _namespaces() if ns.startswith(f"{NETNS_PREFIX}{self.tag}-")]
        mine += [link for link in _links() if (m := _LINK_NAME.match(link)) and m.group(1) == self.tag]
        return mine



def main(argv: list[str]) -> int:
    """``python -m hosts.netns N COMMAND...`` (from tests/): run COMMAND with N
    simulated hosts up, then remove them. COMMAND's environment names them:
    ONESIDED_NETNS_MAP (for tools/netns-rsh), ONESIDED_NETNS_<i> (namespace)
    and ONESIDED_NETNS_ADDR_<i> (address); e.g. the C++ benchmark between two:
    ``sh -c 'onesided_bench --netns $ONESIDED_NETNS_0,$ONESIDED_NETNS_1'``."""
    if len(argv) < 2 or not argv[0].isdigit() or int(argv[0]) < 1:
        print("usage: python -m hosts.netns N COMMAND...", file=sys.stderr)
        return 2
    reason = unavailable()
    if reason:
        print(reason, file=sys.stderr)
        return 2
    sweep_stale()
    with tempfile.TemporaryDirectory(prefix="onesided-netns-") as tmp, SimulatedHosts(int(argv[0]), Path(tmp)) as hosts:
        env = {**os.environ, **hosts.env()}
        for i, host in enumerate(hosts.hosts):
            env[f"ONESIDED_NETNS_{i}"] = host.namespace
            env[f"ONESIDED_NETNS_ADDR_{i}"] = host.address
        return subprocess.call(argv[1:], env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
