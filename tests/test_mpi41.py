"""MPI 4.1's window additions (issue 16, item 4): Shared_query on windows of
every flavor, and the info key mpi_accumulate_granularity. On real ranks
through tests/ranks/mpi41.py or @pytest.mark.ranks, and in one process (a
world of 1)."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import onesided
from conftest import PROVIDERS, provider_id, run_ranks
from onesided import Window

KEY = "mpi_accumulate_granularity"


@pytest.mark.parametrize("provider", PROVIDERS, ids=provider_id)
def test_shared_query_every_flavor(provider: str) -> None:
    out = run_ranks("mpi41.py", 2, "shared_query", provider=provider, timeout=90)
    assert "PASS shared_query" in out.stdout


def test_shared_query_every_flavor_under_mpiexec() -> None:
    """mpi4py's MPI.buffer and MPI.PROC_NULL: an unreachable segment is an
    MPI.buffer at address 0, as mpi4py gives for MPI's null baseptr."""
    out = run_ranks("mpi41.py", 2, "shared_query", launcher="mpiexec", provider="shm", timeout=90)
    assert "PASS shared_query" in out.stdout


def own_view(win: Window, rank: int) -> tuple[np.ndarray, int]:
    buf, du = win.Shared_query(rank)
    return np.frombuffer(buf, np.uint8), du


@pytest.mark.parametrize("shared_memory", ["on", "off"])
def test_shared_query_in_one_process(shared_memory: str) -> None:
    """A world of 1: every flavor but a dynamic one gives the window's own
    memory (writable, the same bytes RMA reaches), for 0 and PROC_NULL; a
    dynamic window gives an empty buffer at address 0."""
    info = {"provider": "shm", "onesided_shared_memory": shared_memory}
    memory = np.zeros(40, np.uint8)
    wins = [Window.Create(memory, 4, info=info), Window.Allocate(40, 4, info=info),
            Window.Allocate_shared(40, 4, info=info)]
    for win in wins:
        for r in (0, onesided.PROC_NULL):
            view, du = own_view(win, r)
            assert (len(view), du) == (40, 4), (win.flavor, r)
            assert view.ctypes.data == win.attrs[0] == np.frombuffer(win, np.uint8).ctypes.data
        view, _ = own_view(win, 0)
        view[20] = 55  # displacement 5 in units of 4 bytes
        got = np.zeros(1, np.uint8)
        with win.lock(0):
            win.Get(got, 0, 5)
        assert got[0] == 55, win.flavor
        win.Free()
    assert memory[20] == 55  # the Create view was the user's memory
    dyn = Window.Create_dynamic(info=info)
    dyn.Attach(memory)
    for r in (0, onesided.PROC_NULL):
        buf, du = dyn.Shared_query(r)
        assert (len(buf), du, buf.address) == (0, 1, 0)
    with pytest.raises(onesided.ArgumentError, match="rank 1"):
        dyn.Shared_query(1)
    dyn.Detach(memory)
    dyn.Free()


def test_shared_query_own_view_outlives_the_window_object() -> None:
    """The view of an Allocate window's own memory (not a shared mapping)
    keeps the window alive, so the memory stays valid after the last other
    reference goes: the core's array itself holds the window (what an
    MPI.buffer over it relies on), not only onesided.buffer."""
    win = Window.Allocate(64, 8, info={"provider": "shm", "onesided_shared_memory": "off"})
    array, _ = win._shared_query(0)
    assert len(array) == 64
    array[:] = 9
    win.Free()
    alive = weakref.ref(win)
    del win
    gc.collect()
    assert alive() is not None, "the window (and its memory) went while a view of it lives"
    assert (array == 9).all()
    del array
    gc.collect()
    assert alive() is None


def creation_error(info: dict[str, str]) -> str:
    """The ArgumentError's message if a window with this info is refused, else ''."""
    try:
        Window.Allocate(64, 8, info={"provider": "shm", **info}).Free()
    except onesided.ArgumentError as e:
        return str(e)
    return ""


@pytest.mark.ranks(2, timeout=90)
def test_granularity_rejected_on_every_rank() -> None:
    """Bad values, at one rank or at all, and values that differ between
    ranks raise ArgumentError at every rank, with the same message naming
    the key; good values are reported by Get_info as given."""
    comm = onesided.COMM_WORLD
    rank = comm.rank
    for value in ["-1", "x", "1.5", "", " 8", "+8", "0x10", "18446744073709551616"]:
        for where in ("all", "rank 1"):
            mine = {KEY: value} if where == "all" or rank == 1 else {KEY: "8"}
            message = creation_error(mine)
            assert message, (value, where, "no error")
            assert KEY in message and "non-negative integer" in message, message
            assert "rank 1" in message if where == "rank 1" else "rank 0" in message, message
            assert len(set(comm.allgather(message))) == 1, (value, where, comm.allgather(message))
    message = creation_error({KEY: str(8 * (rank + 1))})
    assert KEY in message and "differ" in message, message
    assert len(set(comm.allgather(message))) == 1
    for value, shown in (("0", "0"), ("1", "1"), ("24", "24"), ("0010", "10"),
                         ("18446744073709551615", "18446744073709551615")):
        win = Window.Allocate(64, 8, info={"provider": "shm", KEY: value})
        assert win.Get_info()[KEY] == shown, (value, win.Get_info()[KEY])
        win.Free()
    win = Window.Allocate(64, 8, info={"provider": "shm"})
    assert win.Get_info()[KEY] == "0"
    win.Free()


@pytest.mark.parametrize("value", ["-1", "x", "", "1e3", "18446744073709551616"])
def test_granularity_rejected_in_one_process(value: str) -> None:
    with pytest.raises(onesided.ArgumentError, match=f"{KEY} must be a non-negative integer"):
        Window.Allocate(8, 8, info={"provider": "shm", KEY: value})


@pytest.mark.parametrize("flavor", ["Create", "Allocate", "Allocate_shared", "Create_dynamic"])
def test_granularity_reported(flavor: str) -> None:
    info = {"provider": "shm", KEY: "16"}
    win = (Window.Create(np.zeros(8), 8, info=info) if flavor == "Create"
           else Window.Create_dynamic(info=info) if flavor == "Create_dynamic"
           else getattr(Window, flavor)(64, 8, info=info))
    assert win.Get_info()[KEY] == "16"
    assert win.atomics.granularity == 16
    # The report names the granularity where the path holds a lock per so
    # many bytes; the shared-memory path (Allocate and Allocate_shared on one
    # host) applies each element with a CPU atomic or stripe lock instead.
    shared_memory = win.atomics.path.startswith("shared-memory")
    assert shared_memory == (flavor in ("Allocate", "Allocate_shared")), str(win.atomics)
    assert ("lock held per 16 bytes" in str(win.atomics)) != shared_memory, str(win.atomics)
    win.Free()
    default = Window.Allocate(8, 8, info={"provider": "shm"})
    assert default.Get_info()[KEY] == "0" and default.atomics.granularity == 0
    default.Free()


@pytest.mark.parametrize("granularity", ["24", "1"])
@pytest.mark.parametrize("provider", PROVIDERS, ids=provider_id)
def test_granularity_large_concurrent_accumulate_exact(provider: str, granularity: str) -> None:
    """24 bytes: 3 int64 or 2 complex128 (rounded up) per hold; 1: one
    element per hold."""
    out = run_ranks("mpi41.py", 2, "granularity_exact", granularity, provider=provider, timeout=150)
    assert "PASS granularity_exact" in out.stdout
