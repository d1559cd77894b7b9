"""Generalised atomics with native or software paths (issue: hardware offload)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import onesided
from conftest import PROVIDERS, provider_id, run_ranks
from onesided import atomics_table


@pytest.mark.parametrize("provider", PROVIDERS, ids=provider_id)
def test_rmw_and_rmw2_against_numpy(provider: str) -> None:
    out = run_ranks("atomics.py", 2, "reference", provider=provider)
    assert "PASS reference" in out.stdout


@pytest.mark.parametrize("mode", ["default", "declared", "software"])
@pytest.mark.parametrize("provider", PROVIDERS, ids=provider_id)
def test_mixed_op_atomicity(provider: str, mode: str) -> None:
    out = run_ranks("atomics.py", 4, "mixed", mode, provider=provider)
    assert f"PASS mixed {mode}" in out.stdout
    # int64 is native on both providers here unless software is forced: an
    # order tcp;ofi_rxm does not keep is kept by waiting, not by software.
    native = mode != "software"
    assert ("int64 path native:" in out.stdout) == native, out.stdout


def test_implicit_epoch_is_exclusive() -> None:
    out = run_ranks("atomics.py", 3, "implicit_epoch")
    assert "PASS implicit_epoch" in out.stdout


def test_declared_set_and_report_agree_with_the_probe() -> None:
    declared = "fetch_and_op:sum,rmw2:comp_swap_lt"
    # The libfabric path (the fast path does not use the provider's atomics).
    win = onesided.Window.Allocate(8, info={"provider": "shm", "accumulate_ops": declared, "onesided_fast_path": "off"})
    assert win.info["accumulate_ops"] == declared
    codes = {name: i for i, (name, _) in enumerate(onesided._core.functions())}
    ops = {name: i for i, (name, _) in enumerate(onesided._core.ops())}
    for d, (dname, _) in enumerate(onesided._core.dtypes()):
        applicable = [(f, o) for f, o in (("fetch_and_op", "sum"), ("rmw2", "comp_swap_lt"))
                      if onesided._core.op_applies(ops[o], d)]
        probe = all(win._native_count(codes[f], ops[o], d) > 0 for f, o in applicable)
        assert win._native_atomics(d) == (probe and bool(applicable)), dname
    assert win.atomics["sum", "int64"].native
    assert not win.atomics["sum", "complex128"].native
    assert "complex128" in win.atomics["sum", "complex128"].reason
    with win.lock(0):
        with pytest.raises(onesided.OpSetError, match="accumulate:sum is outside"):
            win.Accumulate(np.ones(1, np.int64), 0)
        with pytest.raises(onesided.OpSetError, match="compare_and_swap"):
            win.Compare_and_swap(np.ones(1, np.int64), np.ones(1, np.int64), np.zeros(1, np.int64), 0)
        got = np.zeros(1, np.int64)
        win.Fetch_and_op(np.ones(1, np.int64), got, 0)
    win.Free()


@pytest.mark.parametrize("value, error", [
    ("fetch_and_op:bogus", "names no op"),
    ("fetch_op:sum", "names no function"),
    ("accumulate:no_op", "not an op accumulate takes"),
    ("rmw:comp_swap_lt", "not an op rmw takes"),
])
def test_accumulate_ops_grammar_errors(value: str, error: str) -> None:
    with pytest.raises(onesided.ArgumentError, match=error):
        onesided.Window.Allocate(8, info={"accumulate_ops": value})


def test_accumulate_ops_aliases_and_canonical_forms() -> None:
    for value, canonical in (("same_op_no_op", "all"), ("rmw:swap, rmw:inc", "rmw:replace,rmw:inc"),
                             ("compare_and_swap", "compare_and_swap")):
        win = onesided.Window.Allocate(8, info={"which_accumulate_ops": value})
        assert win.info["accumulate_ops"] == canonical
        win.Free()
    with pytest.raises(onesided.ArgumentError, match="accumulate_ordering"):
        onesided.Window.Allocate(8, info={"accumulate_ordering": "rar,wow"})


def test_software_can_be_requested() -> None:
    win = onesided.Window.Allocate(8, info={"onesided_atomics": "software"})
    assert not any(p.native for p in win.atomics.values())
    assert "onesided_atomics=software" in win.atomics["sum", "int64"].reason
    assert win.info["atomics"] == "software"
    win.Free()
    with pytest.raises(onesided.ArgumentError, match="onesided_atomics"):
        onesided.Window.Allocate(8, info={"onesided_atomics": "hardware"})


def test_request_based_rmw_completes() -> None:
    win = onesided.Window.Allocate(16, disp_unit=8)
    win.Lock(0)
    results = [np.zeros(1, np.int64) for _ in range(4)]
    reqs = [win.Rrmw(np.array([i + 1], np.int64), results[i], 0, 0, onesided.RMW_SUM) for i in range(4)]
    onesided.Request.Waitall(reqs)
    assert sorted(int(r[0]) for r in results) == [0, 1, 3, 6]
    req = win.Rrmw2(np.array([10], np.int64), np.array([-1], np.int64), results[0], 0, 0, onesided.RMW2_COMP_SWAP_EQ)
    while not req.Test():
        pass
    assert results[0][0] == 10
    win.Unlock(0)
    assert np.frombuffer(win, np.int64)[0] == -1
    win.Free()


def test_fast_path_report() -> None:
    """On one host an Allocate window takes the intra-node fast path, and the
    report says so: lock-free CPU atomics up to 8 bytes, stripe locks above."""
    win = onesided.Window.Allocate(64, info={"accumulate_ops": "fetch_and_op:sum"})
    assert win.info["onesided_fast_path"] == "on"
    assert win.info["onesided_path"] == "shared-memory"
    assert win.atomics["sum", "int64"] == (True, "shared-memory path: lock-free CPU atomics on shared memory")
    assert not win.atomics["sum", "complex128"].native
    assert "stripe locks" in win.atomics["sum", "complex128"].reason
    with win.lock(0):
        with pytest.raises(onesided.OpSetError):  # the declared set still holds
            win.Accumulate(np.ones(1, np.int64), 0)
    win.Free()
    # The switch, by its name and by its old name (an alias), picks the
    # provider path; the path is named in the report.
    for key in ("onesided_shared_memory", "onesided_fast_path"):
        off = onesided.Window.Allocate(64, info={key: "off"})
        assert off.info["onesided_fast_path"] == "off"
        assert off.info["onesided_shared_memory"] == "off"
        assert off.info["onesided_path"] == "provider"
        assert off.info["onesided_locks"].startswith("messages")
        off.Free()
    with pytest.raises(onesided.Error, match="disagree"):
        onesided.Window.Allocate(64, info={"onesided_shared_memory": "off", "onesided_fast_path": "on"})


def test_lock_report() -> None:
    """On one host with shm every window's lock is in shared memory; on a
    network provider it is a message to the target."""
    fast = onesided.Window.Allocate(64)
    user = onesided.Window.Create(np.zeros(8))
    tcp = onesided.Window.Create(np.zeros(8), info={"provider": "tcp;ofi_rxm"})
    assert fast.info["onesided_locks"].startswith("shared memory")
    assert user.info["onesided_locks"].startswith("shared memory")
    assert tcp.info["onesided_locks"].startswith("messages")
    for w in (fast, user, tcp):
        with w.lock(0):
            pass
        w.Free()


def test_docs_table_matches_the_probe() -> None:
    doc = Path(__file__).resolve().parents[1] / "docs" / "atomics.md"
    assert atomics_table.section(doc.read_text()) == atomics_table.generate(), (
        "docs/atomics.md is stale: run python -m onesided.atomics_table --write docs/atomics.md"
    )
