"""Small puts and gets on the cross-memory path wait in a stage per target
and are copied together (docs/semantics.md, "Operations and their
guarantees"): one origin's operations to one target keep their program
order, every completion point copies what waits, and a staged Get's result
is kept alive until then (tests/ranks/staged_copies.py)."""

from __future__ import annotations

import pytest

from conftest import run_ranks


@pytest.mark.parametrize("kind", ["create", "dynamic"])
@pytest.mark.parametrize("check", ["order", "completion", "kept"])
def test_staged_copies(check: str, kind: str) -> None:
    out = run_ranks("staged_copies.py", 2, check, kind, timeout=60)
    assert f"PASS {check}" in out.stdout, out.stdout
