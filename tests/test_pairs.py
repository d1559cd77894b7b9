"""MPI's pair types (issue 29): MAXLOC and MINLOC, and REPLACE and NO_OP of
whole pairs, atomic from every rank on every data path
(tests/ranks/pairs.py), and what a process alone can check: the constants,
the records onesided takes, the refusals."""

from __future__ import annotations

import numpy as np
import pytest

import onesided
from conftest import run_ranks

PATHS = [("shared-memory", "shm"), ("cross-memory", "shm"), ("provider", "shm"), ("provider", "tcp;ofi_rxm")]


@pytest.mark.parametrize("path, provider", PATHS, ids=[f"{p}-{q}" for p, q in PATHS])
def test_pairs_are_atomic_and_follow_mpis_tie_rule(path: str, provider: str) -> None:
    out = run_ranks("pairs.py", 3, path, provider=provider, timeout=180)
    assert f"PASS pairs {path}" in out.stdout, out.stdout + out.stderr


def test_pair_constants_are_c_struct_records() -> None:
    assert onesided.MAXLOC.name == "MAXLOC" and onesided.MINLOC.name == "MINLOC"
    assert onesided.INT_INT is onesided.TWOINT
    for name, value, index_at, size in [("SHORT_INT", "i2", 4, 8), ("TWOINT", "i4", 4, 8), ("LONG_INT", "i8", 8, 16),
                                        ("FLOAT_INT", "f4", 4, 8), ("DOUBLE_INT", "f8", 8, 16),
                                        ("LONG_DOUBLE_INT", np.longdouble, 16, 32)]:
        dt = getattr(onesided, name)
        assert dt.itemsize == size, name
        assert [(f[0], f[1]) for f in dt.fields.values()] == [(np.dtype(value), 0), (np.dtype("i4"), index_at)], name


def test_records_of_the_same_layout_are_taken_whatever_their_names() -> None:
    win = onesided.Window.Allocate(64, disp_unit=16)
    mine = np.dtype([("score", "f8"), ("who", "i4")], align=True)
    win.Lock(0)
    win.Accumulate(np.array([(2.5, 7)], mine), 0, 1, onesided.MAXLOC)
    got = np.zeros(1, mine)
    win.Get_accumulate(None, got, 0, 1, onesided.NO_OP)
    win.Unlock(0)
    assert got.tolist() == [(2.5, 7)]
    # The packed record (12 bytes) is not C's layout: refused, naming the pairs.
    with pytest.raises(onesided.UnsupportedError, match="double_int"):
        win.Accumulate(np.zeros(1, [("v", "f8"), ("i", "i4")]), 0, 0, onesided.MAXLOC)
    # Pairs take MAXLOC, MINLOC, REPLACE and NO_OP only; MAXLOC takes only pairs.
    win.Lock(0)
    with pytest.raises(onesided.UnsupportedError, match="sum"):
        win.Accumulate(np.zeros(1, onesided.DOUBLE_INT), 0, 0, onesided.SUM)
    with pytest.raises(onesided.UnsupportedError, match="maxloc"):
        win.Accumulate(np.zeros(2, np.float64), 0, 0, onesided.MAXLOC)
    with pytest.raises(onesided.UnsupportedError):
        win.Compare_and_swap(np.zeros(1, onesided.TWOINT), np.zeros(1, onesided.TWOINT), np.zeros(1, onesided.TWOINT),
                             0, 0)
    win.Unlock(0)
    assert win.atomics["minloc", "double_int"].native is False or win.atomics.path == "shared-memory"
    win.Free()


def test_no_op_ignores_every_origin_spelling() -> None:
    win = onesided.Window.Allocate(32, disp_unit=8)
    np.frombuffer(win, np.int64)[:] = [5, 6, 7, 8]
    result = np.zeros(2, np.int64)
    for origin in (None, [None, 0, np.int64], [np.zeros(9, np.int64), 0, np.int64], [np.zeros(3, np.int8), 0]):
        result[:] = -1
        win.Lock(0)
        win.Get_accumulate(origin, result, 0, 1, onesided.NO_OP)
        win.Unlock(0)
        assert result.tolist() == [6, 7], origin
    win.Lock(0)
    with pytest.raises(onesided.ArgumentTypeError):  # still a spec, checked
        win.Get_accumulate("nonsense", result, 0, 1, onesided.NO_OP)
    win.Unlock(0)
    win.Free()


@pytest.mark.parametrize("value, declared", [
    ("sum,no_op", "accumulate:sum,get_accumulate:sum,get_accumulate:no_op,fetch_and_op:sum,fetch_and_op:no_op,"
                  "rmw:sum"),
    ("cswap", "compare_and_swap"),
    ("any_op", "all"),
    ("none", "none"),
    ("sum,frobnicate", "accumulate:sum,get_accumulate:sum,fetch_and_op:sum,rmw:sum"),
    ("frobnicate", "all"),
])
def test_which_accumulate_ops_reads_mpichs_grammar(value: str, declared: str) -> None:
    win = onesided.Window.Allocate(8, info={"which_accumulate_ops": value})
    assert win.info["accumulate_ops"] == declared
    win.Free()


def test_both_op_keys_declare_what_both_name() -> None:
    win = onesided.Window.Allocate(8, disp_unit=8, info={"accumulate_ops": "same_op_no_op",
                                                        "which_accumulate_ops": "sum"})
    assert win.info["accumulate_ops"] == "accumulate:sum,get_accumulate:sum,fetch_and_op:sum,rmw:sum"
    win.Lock(0)
    with pytest.raises(onesided.OpSetError):
        win.Accumulate(np.ones(1, np.int64), 0, 0, onesided.MAX)
    win.Unlock(0)
    win.Free()
    with pytest.raises(onesided.ArgumentError, match="names no op"):
        onesided.Window.Allocate(8, info={"accumulate_ops": "fetch_and_op:frobnicate"})


def test_dynamic_calls_cross_regions_attached_side_by_side_but_never_split_an_element() -> None:
    """MPI 4.1 12.2.4 makes only unattached memory erroneous: a contiguous call
    may run across two adjacent regions; an accumulate-style one must not
    split an element between them, and a gap is still out of bounds."""
    win = onesided.Window.Create_dynamic()
    mem = np.zeros(8, np.int64)
    raw = mem.view(np.uint8)
    win.Attach(raw[:16])
    win.Attach(raw[16:44])  # a boundary at byte 44: inside element 5
    win.Attach(raw[44:56])
    base = onesided.Get_address(mem)
    win.Lock(0)
    win.Put(np.array([1, 2, 3], np.int64), 0, base + 8)  # elements 1..3, across byte 16
    win.Flush(0)  # a put and an accumulate are not ordered
    win.Accumulate(np.array([10, 20], np.int64), 0, base + 8, onesided.SUM)
    win.Flush(0)
    got = np.zeros(3, np.int64)
    win.Get(got, 0, base + 8)
    win.Flush(0)
    assert got.tolist() == [11, 22, 3]
    with pytest.raises(onesided.BoundsError, match="inside an element"):
        win.Accumulate(np.ones(2, np.int64), 0, base + 32, onesided.SUM)  # element 5 straddles byte 44
    with pytest.raises(onesided.BoundsError, match="not inside memory"):
        win.Put(np.ones(3, np.int64), 0, base + 40)  # runs past byte 56: not attached
    win.Unlock(0)
    for part in (raw[:16], raw[16:44], raw[44:56]):
        win.Detach(part)
    win.Free()
