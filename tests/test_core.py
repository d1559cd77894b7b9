"""The core RMA properties on real ranks: under onesided's launcher and under
mpiexec with mpi4py's COMM_WORLD, on the shm and tcp providers."""

from __future__ import annotations

import pytest

from conftest import LAUNCHERS, PROVIDERS, provider_id, run_ranks

CHECKS = {
    "counter": 4,
    "cas": 4,
    "get_accumulate": 2,
    "putget": 3,
    "lock_contention": 4,
    "lock_contention_create": 4,
    "lock_wait_gil": 2,
    "flush_visibility": 3,
    "passive_sleep": 2,
    "passive_busy": 2,
    "bounds": 2,
    "threads": 2,
    "test_after_complete": 2,
}


@pytest.mark.parametrize("provider", PROVIDERS, ids=provider_id)
@pytest.mark.parametrize("launcher", LAUNCHERS)
@pytest.mark.parametrize("check", list(CHECKS))
def test_core(check: str, launcher: str, provider: str) -> None:
    out = run_ranks("core.py", CHECKS[check], check, launcher=launcher, provider=provider)
    assert f"PASS {check}" in out.stdout


@pytest.mark.parametrize("provider", PROVIDERS, ids=provider_id)
def test_windows_over_an_mpi4py_split_communicator(provider: str) -> None:
    out = run_ranks("core.py", 4, "split", launcher="mpiexec", provider=provider)
    assert "PASS split" in out.stdout


def test_fi_provider_environment_variable_selects_the_provider() -> None:
    out = run_ranks("core.py", 2, "counter", provider=None, env={"FI_PROVIDER": "tcp", "ONESIDED_TEST_PROVIDER": "tcp"})
    assert "PASS counter" in out.stdout


@pytest.mark.parametrize("check", ["counter", "cas", "putget", "lock_contention", "flush_visibility", "passive_busy",
                                   "threads", "lock_wait_gil"])
def test_core_on_the_libfabric_path(check: str) -> None:
    """Ranks on one host take the intra-node fast path by default; with it
    off (as when ranks are on different hosts) shm's libfabric path still
    keeps every property."""
    out = run_ranks("core.py", CHECKS[check], check, provider="shm", env={"ONESIDED_FAST_PATH": "off"})
    assert f"PASS {check}" in out.stdout
