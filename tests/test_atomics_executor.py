"""win.atomics says who executes native atomics: the NIC, the provider's
software at the target, or the CPU on shared memory (docs/atomics.md)."""

from __future__ import annotations

import pytest

import onesided
from onesided.window._atomics_report import PROVIDER_EXECUTORS, executor_of


def test_table_kinds() -> None:
    assert executor_of("cxi", "provider").kind == "nic"
    for provider in ("tcp;ofi_rxm", "verbs;ofi_rxm", "shm", "efa", "sockets"):
        assert executor_of(provider, "provider").kind == "provider", provider
    assert executor_of("tcp;ofi_rxm", "shared-memory").kind == "cpu"
    assert executor_of("shm", "cross-memory").kind == "origin"
    assert executor_of("someday", "provider").kind == "unknown"
    assert all(e.kind in ("nic", "provider") for e in PROVIDER_EXECUTORS.values())


@pytest.mark.parametrize(
    "flavor, provider, kind, words",
    [
        ("allocate", "shm", "cpu", "atomic instructions on shared memory"),
        ("create", "shm", "origin", "by cross-memory attach, under the target's lock"),
        ("create", "tcp;ofi_rxm", "provider", "ofi_rxm carries atomics as messages"),
        ("allocate", "tcp;ofi_rxm", "provider", "ofi_rxm carries atomics as messages"),
    ],
)
def test_window_reports_executor(flavor: str, provider: str, kind: str, words: str) -> None:
    info = {"provider": provider}
    if flavor == "allocate":
        win = onesided.Window.Allocate(8, 8, info=info)
    else:
        win = onesided.Window.Create(bytearray(8), 8, info=info)
    try:
        report = win.atomics
        assert report.executor.kind == kind and words in report.executor.description, report.executor
        # The cross-memory path runs every dtype in software, by the origin.
        assert (f"native ({kind})" if kind != "origin" else "software (onesided, by the origin)") in repr(win)
        assert f"executed by {kind}: " in str(report)
    finally:
        win.Free()


@pytest.mark.parametrize(
    "flavor, info, path",
    [
        ("allocate", {}, "shared-memory"),
        ("create", {"provider": "shm"}, "cross-memory"),
        ("allocate", {"provider": "shm", "onesided_shared_memory": "off"}, "provider"),
        ("allocate", {"provider": "tcp;ofi_rxm", "mpi_accumulate_granularity": "8"}, "provider"),
    ],
)
def test_report_says_only_what_holds(flavor: str, info: dict[str, str], path: str) -> None:
    """str(win.atomics) has a native line only when a dtype is native, a
    software line only when one is software, and names
    mpi_accumulate_granularity as in force only where the software path
    uses it (not on the shared-memory path: docs/semantics.md, Windows);
    win.info["atomics"] is one of the words docs/atomics.md gives."""
    win = (onesided.Window.Create(bytearray(8), 8, info=info) if flavor == "create"
           else onesided.Window.Allocate(8, 8, info=info))
    try:
        report, text = win.atomics, str(win.atomics)
        assert report.path == path
        natives = {p.native for p in report.by_dtype().values()}
        heads = [line.split()[0] for line in text.splitlines()]
        assert ("native" in heads) == (True in natives), text
        assert ("software" in heads) == (False in natives), text
        software = next((line for line in text.splitlines() if line.startswith("software")), "")
        in_force = "the target's lock held per" in software
        assert in_force == (False in natives and path != "shared-memory"), text
        assert win.info["atomics"] == {frozenset({True}): "native", frozenset({False}): "software"}.get(
            frozenset(natives), "mixed")
    finally:
        win.Free()
