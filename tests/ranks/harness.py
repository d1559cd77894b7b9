"""What every rank program shares: the communicator and the window info the
test asked for (through the environment set by tests/conftest.py)."""

from __future__ import annotations

import os
from typing import Any

import onesided


def comm() -> Any:
    if os.environ.get("ONESIDED_TEST_COMM") == "mpi":
        from mpi4py import MPI

        return MPI.COMM_WORLD
    return onesided.COMM_WORLD


def info(**extra: str) -> dict[str, str]:
    out = dict(extra)
    provider = os.environ.get("ONESIDED_TEST_PROVIDER")
    if provider:
        out["provider"] = provider
    return out


def check_provider(win: onesided.Window) -> None:
    """The window really uses the provider the test asked for."""
    wanted = os.environ.get("ONESIDED_TEST_PROVIDER")
    if wanted:
        assert win.provider.split(";")[0] == wanted.split(";")[0], (win.provider, wanted)
