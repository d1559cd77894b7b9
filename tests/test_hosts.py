"""Where the launcher places ranks (onesided.run._hosts) and how it builds the
remote shell's command (onesided.run._launch.remote_command): pure functions,
no hosts needed. The launcher across real (simulated) hosts:
tests/test_multihost.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from onesided.run._hosts import (
    HostSlots,
    _route_source,
    interface_toward,
    coordinator_address,
    expand_nodelist,
    expand_tasks_per_node,
    is_local,
    parse_hosts,
    placement,
    read_hostfile,
    slurm_hosts,
)
from onesided.run._launch import DEFAULT_RSH, SLURM_RSH, remote_command
from onesided.run._slurm import node_addresses, parse_node_addresses


def test_parse_hosts() -> None:
    assert parse_hosts("a,b:2, 10.0.0.1:3") == [HostSlots("a", 1), HostSlots("b", 2), HostSlots("10.0.0.1", 3)]


@pytest.mark.parametrize("text", ["", "a,,b", "a:0", "a b", "a;b"])
def test_parse_hosts_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="--hosts"):
        parse_hosts(text)


def test_hostfile(tmp_path: Path) -> None:
    path = tmp_path / "hosts"
    path.write_text("# cluster\nn1\nn2:4   # fat node\n\nn3 slots=2\n")
    assert read_hostfile(path) == [HostSlots("n1"), HostSlots("n2", 4), HostSlots("n3", 2)]
    path.write_text("n1 4\n")
    with pytest.raises(ValueError, match=":1:"):
        read_hostfile(path)


def test_placement_fills_slots_then_wraps() -> None:
    assert placement(parse_hosts("a,b:2"), 7) == ["a", "b", "b", "a", "b", "b", "a"]
    assert placement(parse_hosts("a:4,b:4"), 2) == ["a", "a"]


@pytest.mark.parametrize(
    "text, names",
    [
        ("n1", ["n1"]),
        ("n[01-03,07],gpu5", ["n01", "n02", "n03", "n07", "gpu5"]),
        ("r[1-2]-n[8-9]", ["r1-n8", "r1-n9", "r2-n8", "r2-n9"]),
        ("node[098-101]", ["node098", "node099", "node100", "node101"]),
    ],
)
def test_slurm_nodelist(text: str, names: list[str]) -> None:
    assert expand_nodelist(text) == names


@pytest.mark.parametrize("text", ["n[1-", "n1]", "n[3-1]", "n[a-b]", "a,,b"])
def test_slurm_nodelist_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="nodelist"):
        expand_nodelist(text)


def test_slurm_tasks_per_node() -> None:
    assert expand_tasks_per_node("2(x3),1") == [2, 2, 2, 1]
    with pytest.raises(ValueError):
        expand_tasks_per_node("2x3")


def test_slurm_hosts() -> None:
    assert slurm_hosts({}) is None
    env = {"SLURM_JOB_NODELIST": "c[1-3]", "SLURM_TASKS_PER_NODE": "4(x2),1"}
    assert slurm_hosts(env) == [HostSlots("c1", 4), HostSlots("c2", 4), HostSlots("c3", 1)]
    assert slurm_hosts({"SLURM_JOB_NODELIST": "c[1-2]"}) == [HostSlots("c1"), HostSlots("c2")]


def test_local_hosts() -> None:
    assert is_local("localhost") and is_local("127.0.0.1") and is_local("::1")
    assert not is_local("192.0.2.77")


def test_coordinator_address_is_not_loopback() -> None:
    if _route_source("192.0.2.77") is None:  # TEST-NET: routed, never sent to
        pytest.skip("this machine has no route off itself")
    address = coordinator_address(["192.0.2.77"])
    assert not address.startswith("127.")
    assert interface_toward("192.0.2.77") not in (None, "lo")


def test_coordinator_address_unknown_hosts() -> None:
    """Hosts that do not resolve here, on a machine whose name is loopback
    (this one's, or not): an error that says what to pass, never 127.0.0.1."""
    try:
        address = coordinator_address(["no-such-host.invalid"])
    except ValueError as exc:
        assert "pass --coordinator ADDRESS" in str(exc)
    else:
        assert not address.startswith("127.")


def test_remote_command() -> None:
    words = ["/usr/bin/python3", "-m", "onesided.run._remote_rank"]
    assert remote_command(DEFAULT_RSH, "n1", words) == [*DEFAULT_RSH, "n1", *words]
    assert remote_command(SLURM_RSH, "c2", words) == [
        "srun", "--nodes=1", "--ntasks=1", "--nodelist=c2", "--overlap", "sh", "-c",
        "/usr/bin/python3 -m onesided.run._remote_rank",
    ]
    assert remote_command(["rsh", "-l", "me", "{host}"], "h", words) == ["rsh", "-l", "me", "h", *words]


def test_slurm_node_addresses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """NodeAddr from `scontrol -o show node`, the name where Slurm gives
    none or scontrol is missing (the real scontrol: tests/test_slurm.py)."""
    shown = (
        "NodeName=c1 Arch=x86_64 CoresPerSocket=1 NodeAddr=10.0.0.1 NodeHostName=c1 Version=22.05.8\n"
        "NodeName=c2 Arch=x86_64 NodeAddr=c2.example NodeHostName=c2\n"
    )
    assert parse_node_addresses(shown) == {"c1": "10.0.0.1", "c2": "c2.example"}
    (tmp_path / "scontrol").write_text(f"#!/bin/sh\nprintf '%s' '{shown}'\n")
    (tmp_path / "scontrol").chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert node_addresses(["c2", "c1", "c3"]) == ["c2.example", "10.0.0.1", "c3"]
    monkeypatch.setenv("PATH", str(tmp_path / "none"))
    assert node_addresses(["c1"]) == ["c1"]


def test_launcher_reports_bad_hosts() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "onesided", "run", "-n", "2", "--hosts", "a:0", "x.py"],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 2
    assert "--hosts: 'a:0' has 0 slots" in proc.stderr
