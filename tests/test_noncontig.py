"""Non-contiguous data (issue 19): strided numpy views as origins, results
and compare buffers, onesided.Layout and mpi4py derived datatypes as
target and origin layouts.

In a plain process (a world of size 1, the window targeting itself): the
argument rules and a few transfers compared with numpy. On 2 ranks
(tests/ranks/noncontig.py): every layout kind x Put, Get, Accumulate,
Get_accumulate on the shared-memory path, libfabric shm and tcp, and
out-of-window layouts raising before anything is written; mpi4py's
scalable counter idea on Create_indexed_block under mpiexec.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import onesided
from conftest import run_ranks
from onesided import Layout, Window

MPI = pytest.importorskip("mpi4py.MPI")

# Where the ops run: the shared-memory path (Allocate on one host, the
# default), libfabric's shm provider with it off, tcp.
PATHS = {
    "shared_memory": ("shm", {}),
    "libfabric_shm": ("shm", {"ONESIDED_SHARED_MEMORY": "off"}),
    "tcp": ("tcp;ofi_rxm", {}),
}
PASS = re.compile(r"^PASS (\w+) cases=(\d+)$", re.M)


@pytest.mark.parametrize("check", ["layouts", "bounds", "detached"])
@pytest.mark.parametrize("path", list(PATHS))
def test_layouts_on_two_ranks(path: str, check: str) -> None:
    provider, env = PATHS[path]
    out = run_ranks("noncontig.py", 2, check, provider=provider, env=env, timeout=180)
    found = PASS.findall(out.stdout)
    assert found and found[0][0] == check and int(found[0][1]) > 0, out.stdout
    print(out.stdout.strip())


def test_scalable_counter_on_indexed_block_types_under_mpiexec() -> None:
    out = run_ranks("noncontig.py", 3, "nxtval", launcher="mpiexec", provider="shm")
    assert "PASS nxtval cases=60" in out.stdout, out.stdout


HALO = Path(__file__).resolve().parents[1] / "examples" / "halo.py"


@pytest.mark.parametrize("launcher", ["onesided", "mpiexec"])
def test_halo_example_matches_the_single_process_run(launcher: str) -> None:
    out = run_ranks(str(HALO), 4, launcher=launcher, provider=None, timeout=180)
    assert re.search(r"^halo: 4 ranks, .* max \|difference\| from the single-process run: 0\.0$", out.stdout,
                     re.M), out.stdout


# -- in one process --------------------------------------------------------------


@pytest.fixture
def win():
    w = Window.Allocate(8 * 64, disp_unit=8)
    yield w
    try:
        w.Free()
    except onesided.EpochError:
        pass


@pytest.fixture
def made():
    types: list = []
    yield types
    for t in types:
        t.Free()


def window(win: Window) -> np.ndarray:
    return np.frombuffer(win, np.int64)


def test_strided_views_move_without_a_copy_in_c_order(win) -> None:
    w = window(win)
    a = np.arange(48, dtype=np.int64).reshape(6, 8)
    grid = w.reshape(8, 8)
    with win.lock(0):
        win.Put(a[::-1, 3], 0, (0, 1, Layout.of(grid[:6, 1], grid)))
        win.Put(a.T[::2, ::3], 0, (48, 8))
    assert np.array_equal(grid[:6, 1], a[::-1, 3])
    assert np.array_equal(w[48:56], a.T[::2, ::3].ravel())
    got = np.zeros((8, 8), np.int64)
    with win.lock(0):
        win.Get(got[1::2, ::-2], 0, (48, 16))
    assert np.array_equal(got[1::2, ::-2].ravel(), w[48:64])
    assert (got[::2] == 0).all() and (got[1::2, -2::-2] == 0).all()


def test_strided_accumulate_and_get_accumulate_match_numpy(win) -> None:
    w = window(win)
    grid = w.reshape(8, 8)
    ref = np.zeros((8, 8), np.int64)
    a = np.arange(64, dtype=np.int64).reshape(8, 8) + 1
    result = np.full((8, 8), -1, np.int64)
    with win.lock(0):
        win.Accumulate(a[:, 1], 0, (0, 1, Layout.of(grid[:, 6], grid)), onesided.SUM)
        win.Flush(0)
        win.Get_accumulate(a[2:6, ::3], result[::2, 1:4], 0, Layout.of(grid[4:8, 5:8], grid), onesided.SUM)
    ref[:, 6] += a[:, 1]
    want_result = ref[4:8, 5:8].copy()
    ref[4:8, 5:8] += a[2:6, ::3]
    assert np.array_equal(grid, ref)
    assert np.array_equal(result[::2, 1:4], want_result)
    assert (result[1::2] == -1).all() and (result[:, 0] == -1).all()


def test_non_numpy_strided_buffer_and_zero_size(win) -> None:
    w = window(win)
    a = np.arange(30, dtype=np.int64)
    with win.lock(0):
        win.Put(memoryview(a)[::3], 0, 2)
        win.Put(a[::-2][:0], 0, 0)
        win.Accumulate(a[5:5], 0, (0, 1, Layout((0,), (1,))), onesided.SUM)
    assert np.array_equal(w[2:12], a[::3])


def test_fetch_and_op_and_compare_and_swap_take_one_element_of_a_strided_array(win) -> None:
    w = window(win)
    big = np.arange(12, dtype=np.int64).reshape(3, 4)
    out = np.zeros((3, 4), np.int64)
    with win.lock(0):
        win.Fetch_and_op(big[1:2, 2], out[2:3, 1], 0, 5, onesided.SUM)
        win.Flush(0)
        win.Compare_and_swap(big[2:3, 3], big[0:1, 0], out[0:1, 3], 0, 9)
    assert w[5] == 6 and out[2, 1] == 0 and w[9] == 11 and out[0, 3] == 0


def test_mpi_derived_datatypes_in_one_process(win, made) -> None:
    w = window(win)
    col = MPI.INT64_T.Create_vector(8, 1, 8).Commit()
    made.append(col)
    a = np.arange(8, dtype=np.int64) + 100
    with win.lock(0):
        win.Put(a, 0, (3, 1, col))
    assert np.array_equal(w.reshape(8, 8)[:, 3], a)
    # an origin datatype: every other element of a contiguous buffer
    pick = MPI.INT64_T.Create_vector(4, 1, 2).Commit()
    made.append(pick)
    b = np.arange(8, dtype=np.int64) * 10
    with win.lock(0):
        win.Put([b, 1, pick], 0, (60, 4))
    assert list(w[60:64]) == [0, 20, 40, 60]
    # contiguous derived types take the contiguous path (count x 5 elements)
    five = MPI.INT64_T.Create_contiguous(5).Commit()
    made.append(five)
    got = np.zeros(10, np.int64)
    with win.lock(0):
        win.Get([got, 2, five], 0, (0, 2, five))
    assert np.array_equal(got, w[:10])


def test_mixed_type_structs_move_as_bytes_in_put_and_get_only(win, made) -> None:
    """MPI allows any datatype in Put and Get: a struct of an int64 and a
    double moves as its bytes, each field at its displacement; accumulate-
    style calls refuse it, naming MPI's rule (one predefined type)."""
    mixed = MPI.Datatype.Create_struct([1, 1], [0, 16], [MPI.INT64_T, MPI.DOUBLE]).Commit()
    made.append(mixed)
    record = np.array([7, -1, 0, 0], np.int64)
    record.view(np.float64)[2] = 2.5
    with win.lock(0):
        win.Put([record, 1, mixed], 0, (1, 1, mixed))  # displacement 1: bytes 8.. (disp_unit 8)
        win.Flush(0)
        back = np.full(4, 9, np.int64)
        win.Get([back, 1, mixed], 0, (1, 1, mixed))
    w = window(win)
    assert w[1] == 7 and w[2] == 0 and w[3].view(np.float64) == 2.5  # the hole between the fields untouched
    assert back[0] == 7 and back[1] == 9 and back[2].view(np.float64) == 2.5
    one = np.zeros(2, np.int64)
    with win.lock(0):
        with pytest.raises(onesided.ArgumentError, match="differs from origin dtype int64"):
            win.Put(one, 0, (0, 1, mixed))  # int64 x 2 is not the struct's signature
        with pytest.raises(onesided.ArgumentError, match="mixes basic types .*MPI forbids accumulate"):
            win.Accumulate(one, 0, (0, 1, mixed), onesided.SUM)
        with pytest.raises(onesided.ArgumentError, match="mixes basic types .*MPI forbids accumulate"):
            win.Get_accumulate([one, 1, mixed], one, 0, (0, 2), onesided.SUM)


def test_argument_rules_for_layouts(win, made) -> None:
    col = MPI.INT64_T.Create_vector(8, 1, 8).Commit()
    dcol = MPI.DOUBLE.Create_vector(8, 1, 8).Commit()
    made += [col, dcol]
    a = np.arange(16, dtype=np.int64)
    with win.lock(0):
        with pytest.raises(onesided.ArgumentError, match=r"target count 3 x VECTOR .*8 elements each.* origin count 16"):
            win.Put(a, 0, (0, 3, col))
        with pytest.raises(onesided.ArgumentError, match="target dtype .*differs from origin dtype int64"):
            win.Put(a[:8], 0, (0, 1, dcol))
        with pytest.raises(onesided.ArgumentError, match="strided view moves all of its 8 elements"):
            win.Put([a[::2], 4], 0)
        with pytest.raises(onesided.ArgumentError, match="strided view moves its own elements.*does not convert"):
            win.Put([a[::2], np.int32], 0)
        with pytest.raises(onesided.BufferArgumentError, match="contiguous when a datatype describes"):
            win.Put([a[::2], 1, col], 0)
        with pytest.raises(onesided.ArgumentError, match="reaches bytes"):
            win.Put([a, 1, col], 0, (0, 8))
        with pytest.raises(onesided.ArgumentError, match=r"Layout\(shape=\(4,\).*holds 4 elements, origin count is 16"):
            win.Put(a, 0, Layout((4,)))
        with pytest.raises(onesided.ArgumentError, match="count with a Layout is 1"):
            win.Put(a[:4], 0, (0, 3, Layout((4,))))
        with pytest.raises(onesided.BoundsError):
            win.Put(a[:4], 0, (0, 1, Layout((4,), (30,))))
        with pytest.raises(onesided.BufferArgumentError, match="read-only"):
            ro = np.zeros(16, np.int64)[::2]
            ro.flags.writeable = False
            win.Get(ro, 0, (0, 8))
        with pytest.raises(onesided.BufferArgumentError, match="Rmw2? .*contiguous"):
            win.Rmw(a[::2], np.zeros((8, 2), np.int64)[:, 0], 0, 0)
    assert (window(win) == 0).all()


def test_layout_of_checks_the_view_lies_in_the_base() -> None:
    base = np.zeros((4, 6), np.float64)
    lay = Layout.of(base[1:, ::-2], base)
    assert (lay.shape, lay.strides, lay.offset, lay.dtype) == ((3, 3), (6, -2), 11, np.dtype(np.float64))
    assert lay.count == 9
    with pytest.raises(onesided.ArgumentError, match="outside base"):
        Layout.of(np.zeros(3), base)
    with pytest.raises(onesided.ArgumentError, match="whole"):
        Layout.of(base.reshape(-1).view(np.uint8)[3:11].view(np.float64), base)
    with pytest.raises(onesided.ArgumentTypeError):
        Layout.of([1, 2], base)
    with pytest.raises(onesided.ArgumentTypeError):
        Layout((2.0,))
    with pytest.raises(onesided.ArgumentError, match="2 dims in shape but 1 strides"):
        Layout((2, 3), (1,))
    assert Layout((2, 3)).strides == (3, 1)


def test_request_forms_no_op_and_single_elements_through_layouts(win) -> None:
    w = window(win)
    grid = w.reshape(8, 8)
    with win.lock(0):
        grid[:] = np.arange(64).reshape(8, 8)
    got = np.zeros((8, 3), np.int64)
    with win.lock(0):
        req = win.Rget(got[::-1, 1], 0, (0, 1, Layout.of(grid[:, 2], grid)))
        req.Wait()
        # an atomic read of a column (NO_OP: no origin) into a strided result
        win.Get_accumulate(None, got[:, 2], 0, Layout.of(grid[:, 5], grid), onesided.NO_OP)
    assert np.array_equal(got[::-1, 1], grid[:, 2]) and np.array_equal(got[:, 2], grid[:, 5])
    assert (got[:, 0] == 0).all()
    # one element given by a Layout or a derived datatype, for the one-element calls
    buf, old = np.arange(10, dtype=np.int64), np.full(4, -1, np.int64)
    pick = MPI.INT64_T.Create_indexed_block(1, [2]).Commit()
    try:
        with win.lock(0):
            win.Fetch_and_op([buf, 1, Layout((1,), offset=7)], [old, 1, pick], 0, 9, onesided.SUM)
    finally:
        pick.Free()
    assert w[9] == 9 + 7 and list(old) == [-1, -1, 9, -1]


def test_layouts_on_a_dynamic_window() -> None:
    win = Window.Create_dynamic()
    mem = np.zeros((4, 5), np.int64)
    win.Attach(mem)
    try:
        with win.lock(0):
            win.Put(np.arange(4, dtype=np.int64), 0, (onesided.Get_address(mem), 1, Layout.of(mem[:, 3], mem)))
            with pytest.raises(onesided.BoundsError):
                # past the attached region, though inside the address space
                win.Put(np.arange(5, dtype=np.int64), 0, (onesided.Get_address(mem), 1, Layout((5,), (5,))))
        assert np.array_equal(mem[:, 3], np.arange(4)) and mem.sum() == 6
    finally:
        win.Detach(mem)
        win.Free()


def test_datatypes_of_no_elements(win, made) -> None:
    empty = MPI.INT64_T.Create_contiguous(0).Commit()
    gap = empty.Create_resized(0, 16).Commit()
    made += [empty, gap]
    nothing = np.zeros(0, np.int64)
    with win.lock(0):
        win.Put([np.zeros(4, np.int64), 3, empty], 0, (0, 5, gap))
        win.Put(nothing, 0, (0, None, gap))
        with pytest.raises(onesided.ArgumentError, match="give a count"):
            win.Put([np.zeros(4, np.int64), empty], 0)
        with pytest.raises(onesided.ArgumentError, match="differs from origin count 2"):
            win.Put(np.ones(2, np.int64), 0, (0, 3, gap))
    assert (window(win) == 0).all()
