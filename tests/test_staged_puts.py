"""Small puts on the cross-memory path wait in a stage per target and are
written together (docs/semantics.md, "Completion"): one origin's operations
to one target keep their program order, and every completion point writes
what waits (tests/ranks/staged_puts.py)."""

from __future__ import annotations

import pytest

from conftest import run_ranks


@pytest.mark.parametrize("kind", ["create", "dynamic"])
@pytest.mark.parametrize("check", ["order", "completion"])
def test_staged_puts(check: str, kind: str) -> None:
    out = run_ranks("staged_puts.py", 2, check, kind, timeout=60)
    assert f"PASS {check}" in out.stdout, out.stdout
