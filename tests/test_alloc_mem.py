"""onesided.Alloc_mem / Free_mem (mpi4py's MPI.Alloc_mem / MPI.Free_mem),
and Create windows over that memory, which take the shared-memory path on
one host (docs/design.md, "A window decides once"). The rank programs are
tests/ranks/alloc_mem.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import onesided
from conftest import LAUNCHERS, run_ranks


def test_alloc_mem_surface() -> None:
    mem = onesided.Alloc_mem(24)
    assert isinstance(mem, onesided.buffer)
    assert len(mem) == mem.nbytes == 24 and not mem.readonly
    assert mem.address % os.sysconf("SC_PAGESIZE") == 0
    assert not np.asarray(mem).any()  # zeroed
    mem[0:4] = b"abcd"
    mem[4:8] = 9
    assert mem.tobytes()[:8] == b"abcd\t\t\t\t"
    assert bytes(mem[1:3]) == b"bc" and mem[2:].address == mem.address + 2
    assert memoryview(mem).nbytes == 24
    mem.release()  # mpi4py's name, accepted
    maps = Path("/proc/self/maps").read_text()
    assert "/memfd:onesided-alloc-mem" in maps
    onesided.Free_mem(mem)
    empty = onesided.Alloc_mem(0, onesided.Info())
    assert len(empty) == 0
    onesided.Free_mem(empty)


@pytest.mark.parametrize("size, error", [(-1, onesided.ArgumentError), (2**70, onesided.ArgumentError),
                                         (2**62, onesided.ArgumentError), ("8", onesided.ArgumentTypeError),
                                         (8.0, onesided.ArgumentTypeError), (True, onesided.ArgumentTypeError)])
def test_alloc_mem_refuses_bad_sizes(size: object, error: type) -> None:
    with pytest.raises(error, match="size"):
        onesided.Alloc_mem(size)


def test_alloc_mem_checks_info() -> None:
    with pytest.raises(onesided.ArgumentTypeError, match="info"):
        onesided.Alloc_mem(8, info=3)


def test_free_mem_refuses_what_alloc_mem_did_not_give() -> None:
    with pytest.raises(onesided.ArgumentTypeError, match="mem"):
        onesided.Free_mem(np.zeros(8))
    mem = onesided.Alloc_mem(8)
    onesided.Free_mem(np.frombuffer(mem, np.int64))  # a view reaches its block
    with pytest.raises(onesided.ArgumentError, match="freed already"):
        onesided.Free_mem(mem)


def test_views_outlive_free_mem() -> None:
    """After Free_mem, views keep the mapping: reading and writing them is
    safe (mpi4py's would point into freed memory), and a window created
    over them is not recognised (the block was withdrawn)."""
    mem = onesided.Alloc_mem(64)
    view = np.frombuffer(mem, np.int64)
    onesided.Free_mem(mem)
    del mem
    view[:] = 3
    assert view.sum() == 24
    with onesided.Window.Create(view, disp_unit=8) as win:
        assert win.Get_info()["onesided_path"] != "shared-memory"


def test_create_over_alloc_mem_in_a_world_of_one() -> None:
    mem = onesided.Alloc_mem(64)
    with onesided.Window.Create(mem, disp_unit=8) as win:
        assert win.Get_info()["onesided_path"] == "shared-memory"
        assert win.atomics.executor.kind == "cpu"
        with pytest.raises(onesided.ArgumentError, match="live window"):
            onesided.Free_mem(mem)
        res = np.zeros(1, np.int64)
        with win.lock(0):
            win.Fetch_and_op(np.array([5], np.int64), res, 0, 7)
        assert np.frombuffer(mem, np.int64)[7] == 5
    onesided.Free_mem(mem)


@pytest.mark.parametrize("launcher", LAUNCHERS)
@pytest.mark.parametrize("check", ["shared", "mixed"])
def test_create_over_alloc_mem_on_one_host(launcher: str, check: str) -> None:
    out = run_ranks("alloc_mem.py", 3, check, launcher=launcher, timeout=120)
    assert f"PASS {check}" in out.stdout, out.stdout


@pytest.mark.parametrize("check", ["bounds", "free"])
def test_alloc_mem_window_errors(check: str) -> None:
    out = run_ranks("alloc_mem.py", 2, check, launcher="mpiexec", timeout=120)
    assert f"PASS {check}" in out.stdout, out.stdout


def test_sigkill_leaves_nothing_in_dev_shm() -> None:
    """A process killed by SIGKILL while it holds Alloc_mem memory, written
    and exposed by a window, leaves no entry of it in /dev/shm: the memory
    has no name (a memfd). The one entry such a process does leave is
    libfabric shm's endpoint region, named "<pid>:...", which the next
    onesided process sweeps (transport/stale_shm.cpp); other sessions'
    processes may come and go meanwhile, so only names that could be this
    process's count."""
    before = set(os.listdir("/dev/shm"))
    code = (
        "import os, signal, numpy as np, onesided\n"
        "mem = onesided.Alloc_mem(1 << 20)\n"
        "np.frombuffer(mem, np.uint8)[:] = 1\n"
        "win = onesided.Window.Create(mem, comm=onesided.COMM_WORLD, info={'provider': 'shm'})\n"
        "assert win.Get_info()['onesided_path'] == 'shared-memory'\n"
        "held = '/memfd:onesided-alloc-mem' in open('/proc/self/maps').read()\n"
        "print(os.getpid(), 'memfd' if held else 'none', flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stderr)
    pid, held = proc.stdout.split()
    assert held == "memfd", proc.stdout
    new = set(os.listdir("/dev/shm")) - before
    left = {n for n in new if (pid in n and not n.startswith(f"{pid}:")) or "onesided" in n or "alloc" in n}
    assert not left, left


def test_names_and_parameters_are_mpi4pys() -> None:
    """Code written for MPI.Alloc_mem / MPI.Free_mem calls onesided's the
    same way: the same parameter names, in order, with info optional."""
    import inspect

    from mpi4py import MPI

    for name in ("Alloc_mem", "Free_mem"):
        ours = inspect.signature(getattr(onesided, name)).parameters
        theirs = inspect.signature(getattr(MPI, name)).parameters
        assert list(ours) == list(theirs), (name, list(ours), list(theirs))
        assert [p.default is inspect.Parameter.empty for p in ours.values()] == \
               [p.default is inspect.Parameter.empty for p in theirs.values()], name
    mem = onesided.Alloc_mem(size=8, info=MPI.INFO_NULL)
    onesided.Free_mem(mem=mem)
