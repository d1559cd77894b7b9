"""Every job ends (issue 25): the fault matrix.

launcher {``python -m onesided run``, MPICH's ``mpiexec`` running plain
``python script.py`` as users do} x signal {SIGINT to the launcher, SIGTERM to
the launcher, SIGKILL to one rank, SIGINT to one rank} x the state of the
rank that waits {in Fence, in PSCW Wait, waiting for a lock, in
Wait_notify, in a Request.Wait loop, in window creation, in Free, busy in a
Python loop} (tests/ranks/fault_matrix.py). Two ranks: rank 0 stands in the
state, rank 1 loops in Python and never joins it (SIGKILL and the one-rank
SIGINT go to the rank it concerns: SIGKILL to rank 1, whose death rank 0
then waits on; SIGINT to rank 0, which stands in the call).

Each cell asserts that

* the whole job (the launcher and both ranks) is gone within BOUND seconds of
  the signal,
* its exit status, or the launcher's last words, name the signal (after
  it forwarded a signal of its own, Hydra exits 0 or with the signal's
  number, by a race of its own: there the ranks' tracebacks are checked),
* nothing of onesided's is left in /dev/shm: no file named after either
  rank's pid, without any sweep (libfabric shm's own ``<pid>:0:0`` regions
  are swept by the next onesided process, as docs/semantics.md says, so
  they are checked after that sweep).

The signal is sent once rank 0 printed INSIDE (its main thread stood still
inside the call for 20 ms, tests/ranks/standstill.py); in the request and
busy states, which never stand still, once it printed READY / BUSY.
Run with ``-s`` to see each cell's measured time.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import onesided
from conftest import RANKS, Lines, alive, mpiexec, reap

BOUND = 2.0  # seconds from the signal to the last process of the job gone
STATES = ["fence", "pscw", "lock", "notify", "request", "create", "free", "busy"]
SIGNALS = ["launcher-SIGINT", "launcher-SIGTERM", "rank-SIGKILL", "rank-SIGINT"]
LAUNCHERS = ["onesided", "mpiexec"]
MEASURED: dict[tuple[str, str, str], float] = {}


def start(launcher: str, state: str) -> subprocess.Popen[str]:
    script = str(RANKS / "fault_matrix.py")
    env = dict(os.environ, ONESIDED_TEST_PROVIDER="shm")
    env["PYTHONPATH"] = os.pathsep.join([str(RANKS), *filter(None, [env.get("PYTHONPATH")])])
    if launcher == "onesided":
        env["ONESIDED_TEST_COMM"] = "onesided"
        cmd = [sys.executable, "-m", "onesided", "run", "-n", "2", "--timeout", "60", script, state]
    else:
        env["ONESIDED_TEST_COMM"] = "mpi"
        cmd = [mpiexec(), "-n", "2", sys.executable, script, state]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)


def standing(lines: Lines, state: str) -> dict[int, int]:
    """Wait until rank 0 stands in `state` and rank 1 loops; the ranks' pids."""
    pids = {}
    for _ in range(2):
        m = lines.expect(r"^PID (\d) (\d+)$")
        pids[int(m.group(1))] = int(m.group(2))
        lines.seen.remove(m.group(0))  # so that the next expect finds the other rank
    if state == "busy":
        lines.expect(r"^BUSY$")
        lines.seen.remove("BUSY")
        lines.expect(r"^BUSY$")
        return pids
    lines.expect(r"^BUSY$")
    lines.expect(r"^READY \d+$")
    if state != "request":
        lines.expect(r"^INSIDE$")
    return pids


def names_signal(signum: int, returncode: int, err: str) -> bool:
    name = signal.Signals(signum).name
    words = {signal.SIGINT: "Interrupt", signal.SIGTERM: "Terminated", signal.SIGKILL: "Killed"}[signum]
    return (returncode in (-signum, 128 + signum) or name in err
            or re.search(rf"signal:? {signum}\b|\({words}\)|{words} \(signal {signum}\)", err) is not None)


def onesided_files(pids: list[int]) -> list[str]:
    names = os.listdir("/dev/shm")
    return [n for n in names for p in pids if n.startswith((f"onesided-bell-{p}", f"onesided-{p}-"))]


def libfabric_files(pids: list[int]) -> list[str]:
    return [n for n in os.listdir("/dev/shm") for p in pids if n.startswith(f"{p}:")]


def signal_and_measure(
    proc: subprocess.Popen[str], state: str, fault: str
) -> tuple[dict[int, int], int, float, str, str]:
    """Once rank 0 stands in ``state``, send ``fault``'s signal (to the
    launcher ``proc`` or to a rank) and wait until the launcher and both
    ranks are gone; kills what is left either way. Returns the ranks' pids,
    the signal, the seconds from the signal to the last process gone, and
    the launcher's stdout and stderr."""
    lines = Lines(proc.stdout, deadline=60)
    try:
        try:
            pids = standing(lines, state)
        except AssertionError as e:
            proc.kill()
            raise AssertionError(f"{e}\nexit {proc.wait()}, stderr:\n{proc.stderr.read()}") from None
        signum = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM, "SIGKILL": signal.SIGKILL}[fault.split("-")[1]]
        target = proc.pid if fault.startswith("launcher") else pids[1 if signum == signal.SIGKILL else 0]
        sent = time.monotonic()
        os.kill(target, signum)
        proc.wait(timeout=30)
        while any(alive(p) for p in pids.values()) and time.monotonic() - sent < 30:
            time.sleep(0.005)  # polling the process table: what "gone" means
        took = time.monotonic() - sent
    finally:
        out, err = reap(proc, lines)
    return pids, signum, took, out, err


def check_nothing_left(pids: list[int], text: str) -> None:
    """No file of onesided's named after the ranks in /dev/shm, and none of
    libfabric shm's once the next onesided process has swept."""
    assert onesided_files(pids) == [], text
    onesided._core.remove_stale_shared_memory()  # what the next onesided process does at start
    assert libfabric_files(pids) == [], text


@pytest.mark.timeout(120)
@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("fault", SIGNALS)
@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_the_job_ends(launcher: str, fault: str, state: str) -> None:
    proc = start(launcher, state)
    pids, signum, took, out, err = signal_and_measure(proc, state, fault)
    text = f"exit {proc.returncode}\nstdout:\n{out}\nstderr:\n{err}"
    MEASURED[launcher, fault, state] = took
    print(f"MATRIX {launcher} {fault} {state}: ended in {took:.2f} s, exit {proc.returncode}")
    assert "RETURNED" not in out, text
    assert took < BOUND, f"the job took {took:.2f} s to end\n{text}"
    if launcher == "mpiexec" and fault.startswith("launcher"):
        # Hydra forwards the signal to the ranks, then exits 0 or with the
        # signal's number, by a race of its own; the ranks' ends name it.
        assert proc.returncode in (0, signum, 128 + signum), text
        assert signum != signal.SIGINT or err.count("KeyboardInterrupt") == 2, text
    else:
        assert proc.returncode != 0 and names_signal(signum, proc.returncode, out + err), text
    check_nothing_left(list(pids.values()), text)


def print_matrix(measured: dict[tuple[str, str, str], float], launchers: list[str], states: list[str]) -> None:
    """The measured cells as one table per launcher."""
    for launcher in launchers:
        print(f"\n{launcher}: seconds from the signal to the job gone")
        print(f"{'state':10}" + "".join(f"{fault:>18}" for fault in SIGNALS))
        for state in states:
            row = [measured.get((launcher, fault, state)) for fault in SIGNALS]
            print(f"{state:10}" + "".join(f"{'-' if t is None else f'{t:.2f}':>18}" for t in row))


def test_report() -> None:
    """The matrix as a table (run with -s); runs after every cell above."""
    if not MEASURED:
        pytest.skip("no cell ran")
    print_matrix(MEASURED, LAUNCHERS, STATES)
