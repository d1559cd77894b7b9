"""A rank that dies of a signal leaves no crash-dump file in the user's
working directory and the job reports the signal (issue 13, item 9).

Debian's libfabric pulls in libinfinipath, whose constructor turns SIGSEGV,
SIGBUS, SIGILL, SIGABRT, SIGINT and SIGTERM into exit(1) plus a
"python.<host>-<pid>,vm.btr" file in the current directory, unless
IPATH_NO_BACKTRACE is set. onesided sets it at import (python/onesided/
boot/_crash_signals.py). Each case runs tests/ranks/crash.py in a scratch
directory: rank 1 sends itself the signal, rank 0 is then stopped by the
launcher's SIGTERM (or raises, having seen rank 1 die); neither may leave a
file there, and the launcher must name the signal."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import RANKS, mpiexec
from onesided.run._spawn import finish

SIGNALS = ["SIGSEGV", "SIGABRT", "SIGTERM", "SIGKILL"]
TIMEOUT = 60


def run_in(cwd: Path, launcher: str, *args: str) -> subprocess.CompletedProcess[str]:
    script = str(RANKS / "crash.py")
    if launcher == "onesided":
        cmd = [sys.executable, "-m", "onesided", "run", "-n", "2", "--timeout", str(TIMEOUT), script, *args]
    else:
        # Hydra reports the OR of every rank's wait status ("EXIT STRING"),
        # and rank 0's (killed during the clean-up, or not yet reaped) varies
        # from run to run: each rank's own status is asked for as well.
        cmd = [mpiexec(), "-print-all-exitcodes", "-n", "2", sys.executable, "-m", "mpi4py", script, *args]
    env = dict(os.environ)
    env.pop("IPATH_NO_BACKTRACE", None)  # as a user's shell has it: onesided must set it itself
    # Under `make py-asan` ASan's own SEGV handler would report and exit(1);
    # this test is about the signal reaching the launcher.
    env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS"), "handle_segv=0", "handle_sigbus=0"]))
    env["ONESIDED_TEST_COMM"] = "mpi" if launcher == "mpiexec" else "onesided"
    env["ONESIDED_TEST_PROVIDER"] = "shm"
    env["PYTHONPATH"] = os.pathsep.join([str(RANKS), *filter(None, [env.get("PYTHONPATH")])])
    proc = subprocess.Popen(
        cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True
    )
    out, err, expired = finish(proc, TIMEOUT + 15)
    if expired:
        pytest.fail(f"crash.py {' '.join(args)} timed out\nstdout:\n{out}\nstderr:\n{err}")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def assert_reported(result: subprocess.CompletedProcess[str], launcher: str, name: str) -> None:
    text = f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert f"RANK 1 SENDS ITSELF {name}" in result.stdout, text
    signum = signal.Signals[name].value
    if launcher == "onesided":
        assert f"rank 1 was killed by {name}" in result.stderr, text
        assert result.returncode == 128 + signum, text
    else:
        # MPICH's Hydra: "[mpiexec@host] Exit codes: [host] 0,11", each
        # rank's wait status; rank 1's must say the signal (the core-dump
        # bit aside). Its "EXIT STRING" ORs them with rank 0's, so it says
        # the signal only when rank 0's status adds no bits.
        codes = re.search(r"Exit codes: \[[^\]]*\] (\S+)", result.stdout + result.stderr)
        assert codes, text
        assert int(codes.group(1).split(",")[1]) & 0x7F == signum, text
        assert result.returncode != 0, text


@pytest.mark.parametrize("launcher", ["onesided", "mpiexec"])
@pytest.mark.parametrize("name", SIGNALS)
def test_a_signalled_rank_leaves_no_dump_and_is_reported(tmp_path: Path, launcher: str, name: str) -> None:
    result = run_in(tmp_path, launcher, name)
    assert_reported(result, launcher, name)
    assert sorted(os.listdir(tmp_path)) == [], "files left in the job's working directory"


@pytest.mark.parametrize("name", ["SIGSEGV", "SIGTERM"])
def test_handlers_hooked_before_onesided_loaded_are_given_back(tmp_path: Path, name: str) -> None:
    """libinfinipath loaded by someone else first, with IPATH_NO_BACKTRACE
    unset: importing onesided gives the hooked signals their default back."""
    result = run_in(tmp_path, "onesided", name, "preloaded")
    assert_reported(result, "onesided", name)
    assert sorted(os.listdir(tmp_path)) == [], "files left in the job's working directory"


FAULT = "import ctypes, threading, onesided; print(threading.get_native_id(), flush=True); ctypes.string_at(0)"


@pytest.mark.parametrize("faulthandler", [False, True])
@pytest.mark.parametrize("native", ["1", "0"])
def test_a_faulting_thread_names_itself_and_its_native_frames(native: str, faulthandler: bool) -> None:
    """ONESIDED_NATIVE_BACKTRACE=1: the thread that faults writes its id,
    name and native frames to stderr, then the signal goes on to the handler
    that was there before (Python's faulthandler, whose report still comes,
    or the default): the process dies of SIGSEGV either way. Unset, onesided
    adds nothing."""
    env = dict(os.environ, ONESIDED_NATIVE_BACKTRACE=native)
    env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS"), "handle_segv=0"]))
    cmd = [sys.executable, *(["-X", "faulthandler"] if faulthandler else []), "-c", FAULT]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=TIMEOUT)
    text = f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    tid = proc.stdout.split()[0]  # the faulting thread's id, printed before it faults
    assert proc.returncode == -signal.SIGSEGV, text
    assert ("Fatal Python error: Segmentation fault" in proc.stderr) == faulthandler, text
    header = f"onesided: signal {signal.SIGSEGV.value} in thread {tid} (python"
    if native == "0":
        assert "onesided: signal" not in proc.stderr, text
        return
    assert header in proc.stderr, text
    frames = proc.stderr.split(header, 1)[1].splitlines()[1:]
    # backtrace_symbols_fd's lines: object(symbol+offset) [address]; the fault is under ctypes' call.
    assert any("libffi" in f or "_ctypes" in f for f in frames), text
