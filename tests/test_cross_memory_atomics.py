"""The cross-memory path's atomics (docs/atomics.md): on a `Create` window
whose ranks share a host, every accumulate-style op is applied by the
calling rank to the target's memory by cross-memory attach, under the
target's lock, for every dtype; under both launchers (tests/ranks/cross_memory_atomics.py).
`Create_dynamic` windows on one host take the same path, checking addresses
in tables every rank publishes in shared memory."""

from __future__ import annotations

import pytest

from conftest import LAUNCHERS, run_ranks


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_tickets_are_exact_from_every_rank_including_the_target(launcher: str) -> None:
    out = run_ranks("cross_memory_atomics.py", 3, "tickets", launcher=launcher, timeout=120)
    assert "PASS tickets" in out.stdout, out.stdout


@pytest.mark.parametrize("granularity", ["0", "8"])
def test_vectors_of_every_dtype_are_exact_per_element(granularity: str) -> None:
    out = run_ranks("cross_memory_atomics.py", 3, "vectors", granularity, timeout=120)
    assert "PASS vectors" in out.stdout, out.stdout


def test_dynamic_windows_need_nothing_of_a_stopped_target() -> None:
    out = run_ranks("cross_memory_atomics.py", 2, "dynamic", timeout=60)
    assert "PASS dynamic" in out.stdout, out.stdout
