"""``python -m onesided info`` (python/onesided/_info.py) and the pointer to
it that machine-dependent errors carry (python/onesided/_errors.py).

Each report runs as its own process, so the environment under test is the
one it sees; it creates windows of one rank only, and each test checks that
nothing is left in /dev/shm by it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import onesided
from onesided._errors import MACHINE_HINT

if importlib.util.find_spec("pytest_timeout") is not None:
    pytestmark = pytest.mark.timeout(120)

SECTIONS = {"versions", "mpi4py", "libfabric", "providers", "default_provider", "shared_memory", "dev_shm",
            "interfaces", "tcp_interface", "environment"}


def _shm_entries() -> set[str]:
    return {p.name for p in Path("/dev/shm").iterdir()} if Path("/dev/shm").is_dir() else set()


def info(*args: str, env: dict[str, str] | None = None, code: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m onesided info ARGS`` (or ``python -c code``) with os.environ plus ``env``."""
    full = {k: v for k, v in os.environ.items() if not k.startswith(("ONESIDED_", "FI_"))}
    full.update(env or {})
    command = [sys.executable, "-c", code] if code else [sys.executable, "-m", "onesided", "info", *args]
    before = _shm_entries()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full) as proc:
        try:
            out, err = proc.communicate(timeout=90)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert proc.returncode == 0, err
    # Its entries carry its pid (cpp/src/transport/stale_shm.hpp); others' tests may add theirs meanwhile.
    left = [name for name in _shm_entries() - before if str(proc.pid) in name]
    assert not left, f"info left {left} in /dev/shm"
    return subprocess.CompletedProcess(command, proc.returncode, out, err)


def report(env: dict[str, str] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(info("--json", env=env).stdout)
    return data


def variable(data: dict[str, Any], name: str) -> str | None:
    return next(e["value"] for e in data["environment"] if e["name"] == name)


def test_json_has_every_section_and_what_the_process_loaded() -> None:
    data = report()
    assert set(data) == SECTIONS
    assert data["versions"]["onesided"] == onesided.__version__
    assert data["versions"]["libfabric"] and "." in data["versions"]["libfabric"]
    assert Path(data["libfabric"]["path"]).name.startswith("libfabric.so"), data["libfabric"]
    names = [p["name"] for p in data["providers"]]
    assert "shm" in names and "tcp;ofi_rxm" in names, names
    for provider in data["providers"]:
        if provider["name"] in ("shm", "tcp;ofi_rxm"):
            assert "error" not in provider, provider
            assert provider["provider"] == provider["name"]  # the probe's window took the provider it named
            assert provider["path"] != "shared-memory"
            assert set(provider["native_atomics"]) | set(provider["software_atomics"]) >= {"int64", "float64"}
    assert data["dev_shm"]["total_bytes"] > 0 and 0 <= data["dev_shm"]["free_bytes"] <= data["dev_shm"]["total_bytes"]
    assert "lo" in [i["name"] for i in data["interfaces"]]
    assert {"FI_PROVIDER", "FI_TCP_IFACE", "ONESIDED_SHARED_MEMORY", "ONESIDED_NASTY"} <= {
        e["name"] for e in data["environment"]}


def test_shared_memory_is_taken_by_default_and_off_changes_the_verdict() -> None:
    default = report()["shared_memory"]
    assert default["taken"] is True, default
    assert default["probe"]["path"] == "shared-memory"
    off = report({"ONESIDED_SHARED_MEMORY": "off"})
    assert off["shared_memory"]["taken"] is False
    assert off["shared_memory"]["probe"]["path"] != "shared-memory"
    assert any("ONESIDED_SHARED_MEMORY=off" in r for r in off["shared_memory"]["reasons"]), off["shared_memory"]
    assert variable(off, "ONESIDED_SHARED_MEMORY") == "off"


def test_fi_provider_is_shown_and_filters_the_providers() -> None:
    data = report({"FI_PROVIDER": "tcp"})
    assert variable(data, "FI_PROVIDER") == "tcp"
    assert data["default_provider"] == "tcp"
    # libfabric offers only tcp (under rxm) now, and no rank takes shared memory.
    assert [p["name"] for p in data["providers"]] == ["tcp;ofi_rxm"]
    assert data["shared_memory"]["taken"] is False
    assert any("FI_PROVIDER=tcp" in r for r in data["shared_memory"]["reasons"])


def test_fi_tcp_iface_decides_the_tcp_interface() -> None:
    unset = report()["tcp_interface"]
    assert unset["FI_TCP_IFACE"] is None and unset["one_host"] == "lo"
    chosen = report({"FI_TCP_IFACE": "lo"})["tcp_interface"]
    assert chosen == {"FI_TCP_IFACE": "lo", "one_host": "lo", "across_hosts_launcher": "lo",
                      "across_hosts_other": "lo"}


def test_the_launchers_secret_is_never_printed() -> None:
    secret = "0123456789abcdef" * 2
    for args in ((), ("--json",)):
        out = info(*args, env={"ONESIDED_TOKEN": secret}).stdout
        assert secret not in out
        assert "ONESIDED_TOKEN" in out


def test_text_form_shows_each_section() -> None:
    out = info(env={"FI_TCP_IFACE": "lo"}).stdout
    for heading in ("onesided\n", "\nproviders", "\nshared memory between ranks on this host\n",
                    "\nnetwork interfaces\n", "\nenvironment"):
        assert heading in out, out
    assert "  libfabric   API " in out and "/dev/shm: " in out
    assert "FI_TCP_IFACE=lo" in out


def test_absent_mpi4py_is_reported_not_imported() -> None:
    # sys.modules[name] = None makes `import mpi4py` fail as if it were not installed.
    code = ("import sys, json; sys.modules['mpi4py'] = None\n"
            "from onesided._info import collect\n"
            "print(json.dumps(collect()['mpi4py']))")
    assert json.loads(info(code=code).stdout) == {"installed": False}


def test_installed_mpi4py_reports_its_mpi_library_without_initialising_it() -> None:
    pytest.importorskip("mpi4py")
    code = ("import json\n"
            "from onesided._info import collect\n"
            "found = collect()['mpi4py']\n"
            "from mpi4py import MPI\n"
            "print(json.dumps([found, MPI.Is_initialized()]))")
    found, initialised = json.loads(info(code=code).stdout)
    assert found["installed"] is True and found["version"]
    assert found.get("mpi_library") or found.get("error"), found
    assert initialised is False


def test_machine_errors_point_to_info_and_a_dead_peer_does_not() -> None:
    with pytest.raises(onesided.TransportError) as caught:
        onesided.Window.Allocate(8, info={"provider": "no-such-provider"})
    assert "fi_getinfo" in str(caught.value) and str(caught.value).endswith(MACHINE_HINT)
    assert MACHINE_HINT not in caught.value.args[0]  # the core's text stays as it was
    dead = onesided.TransportError("rank 1 (pid 42) has died; the window cannot complete and is unusable (free it)")
    assert MACHINE_HINT not in str(dead)
