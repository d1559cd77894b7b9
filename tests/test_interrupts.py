"""Every wait is interruptible (issue 25, item 1): SIGINT to a rank blocked
in a onesided call raises KeyboardInterrupt (or what its handler raises)
out of the call within 0.2 s, and the window is left as docs/semantics.md
says ("Interrupted calls").

Each case runs a small script in a child process: a world of one where the
call can block on its own (a notification or PSCW wait with no peer to end
it), two ranks under the launcher where it needs a peer that never comes
(a held lock, a collective the other rank does not enter). The rank prints
READY and its pid right before the call, then INSIDE once its main thread
stands still inside the call (a watching thread sees its frame unchanged
for 20 ms); the test then sends SIGINT to that pid
and the rank prints, when the call raised, the monotonic time (one clock
for every process of the machine), then tries the next call on the window
that semantics.md says works. Should the signal still arrive
just before the wait begins, the call raises at once, which the bound
allows for.

The bound: the wait checks every 50 ms, so the call raises within about
50 ms of the signal; the test allows 0.2 s plus 0.5 s of slack, since this
2-core machine runs other test jobs beside it (the measured times are in
the assertion messages; run with -s to see them). INSIDE comes about 40 ms
into the wait, so the times printed here sit at one phase of the 50 ms
checks; sent at random moments, SIGINT raised within 1.5 to 48 ms.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import RANKS, Lines, reap

BOUND = 0.2  # seconds from the signal to the call raising
SLACK = 0.5  # a loaded 2-core machine (see the module's docstring)
DEADLINE = 60.0  # seconds for anything else: a rank that never gets READY, a hang

PREAMBLE = """\
import os, signal, sys, threading, time, traceback
import numpy as np
import onesided
from standstill import ready  # tests/ranks/standstill.py

def caught():
    print("CAUGHT", repr(time.monotonic()), flush=True)
    traceback.print_exc()

def peer_waits():
    # The other rank: waits for SIGUSR1 from the test, then leaves normally.
    signal.signal(signal.SIGUSR1, lambda *a: sys.exit(0))
    print("PEER", os.getpid(), flush=True)
    while True:
        time.sleep(0.05)

rank = onesided.COMM_WORLD.Get_rank()
"""


def start(script: str, ranks: int, tmp_path: Path) -> subprocess.Popen[str]:
    path = tmp_path / "case.py"
    path.write_text(PREAMBLE + textwrap.dedent(script))
    if ranks == 1:
        cmd = [sys.executable, str(path)]
    else:
        cmd = [sys.executable, "-m", "onesided", "run", "-n", str(ranks), "--timeout", str(DEADLINE), str(path)]
    env = dict(os.environ, ONESIDED_TEST_PROVIDER="shm")
    env["PYTHONPATH"] = os.pathsep.join([str(RANKS), *filter(None, [env.get("PYTHONPATH")])])
    return subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True
    )


def interrupt(script: str, tmp_path: Path, ranks: int = 1, peer: bool = False, whole: bool = True) -> tuple[float, str, str]:
    """Runs `script`, sends SIGINT to the rank that printed READY, and
    returns (seconds from the signal to the call raising, stdout, stderr)
    once the job ended; fails on any deadline. `peer`: rank 1 waits in
    peer_waits() until the test sends it SIGUSR1; `whole`: the job must
    exit 0 (not so where the interrupted call was a collective of the
    launcher's world, which the interruption leaves unusable)."""
    proc = start(script, ranks, tmp_path)
    lines = Lines(proc.stdout)
    try:
        pid = int(lines.expect(r"^READY (\d+)$").group(1))
        lines.expect(r"^INSIDE$")
        sent = time.monotonic()
        os.kill(pid, signal.SIGINT)
        raised = float(lines.expect(r"^CAUGHT (\S+)$").group(1))
        lines.expect(r"^AFTER OK$")
        if peer:
            os.kill(int(lines.expect(r"^PEER (\d+)$").group(1)), signal.SIGUSR1)
        proc.wait(timeout=DEADLINE)
    finally:
        out, err = reap(proc, lines)
    if whole:
        assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{out}\nstderr:\n{err}"
    return raised - sent, out, err


def assert_interrupted(took: float, err: str, call: str, exception: str = "KeyboardInterrupt") -> None:
    assert exception in err, err
    assert call in err, err  # the traceback names the call that was waiting
    assert took < BOUND + SLACK, f"{call} raised {took:.3f} s after SIGINT\n{err}"
    print(f"{call}: raised {took * 1000:.1f} ms after SIGINT")


def test_wait_notify(tmp_path: Path) -> None:
    took, _, err = interrupt(
        """
        win = onesided.Window.Allocate(64, disp_unit=8, info={"onesided_notifications": "1"})
        ready()
        try:
            win.Wait_notify(0, 1)
        except KeyboardInterrupt:
            caught()
        # The counter is as it was: a notification now satisfies the wait.
        with win.lock(0):
            win.Put_notify(np.ones(1), 0, notification_idx=0)
        win.Wait_notify(0, 1)
        win.Free()
        print("AFTER OK", flush=True)
        """,
        tmp_path,
    )
    assert_interrupted(took, err, "Wait_notify")


def test_complete_waiting_for_post(tmp_path: Path) -> None:
    took, _, err = interrupt(
        """
        win = onesided.Window.Allocate(64, disp_unit=8)
        win.Start([0])
        ready()
        try:
            win.Complete()
        except KeyboardInterrupt:
            caught()
        # The access epoch stays open: once the Post comes, Complete ends it.
        win.Post([0])
        win.Complete()
        win.Wait()
        win.Free()
        print("AFTER OK", flush=True)
        """,
        tmp_path,
    )
    assert_interrupted(took, err, "Complete")


def test_wait_for_complete(tmp_path: Path) -> None:
    took, _, err = interrupt(
        """
        win = onesided.Window.Allocate(64, disp_unit=8)
        win.Post([0])
        ready()
        try:
            win.Wait()
        except KeyboardInterrupt:
            caught()
        # The exposure epoch stays open: Wait ends it once Complete came.
        win.Start([0])
        win.Complete()
        win.Wait()
        win.Free()
        print("AFTER OK", flush=True)
        """,
        tmp_path,
    )
    assert_interrupted(took, err, "Wait")


def test_custom_handler_raises_its_exception(tmp_path: Path) -> None:
    took, _, err = interrupt(
        """
        class MyError(Exception):
            pass

        def handler(signum, frame):
            raise MyError("from the handler")

        signal.signal(signal.SIGINT, handler)
        win = onesided.Window.Allocate(64, disp_unit=8, info={"onesided_notifications": "1"})
        ready()
        try:
            win.Wait_notify(0, 1)
        except MyError:
            caught()
        win.Free()
        print("AFTER OK", flush=True)
        """,
        tmp_path,
    )
    assert_interrupted(took, err, "Wait_notify", exception="MyError: from the handler")


def test_uncaught_interrupt_ends_the_process(tmp_path: Path) -> None:
    """The issue's reproduction as a user types it: nothing catches the
    KeyboardInterrupt, and the process ends with its traceback."""
    path = tmp_path / "plain.py"
    # The user's three lines, and ready() to say when the wait has begun: a
    # signal before it would interrupt the print, not the call.
    path.write_text(
        PREAMBLE
        + "win = onesided.Window.Allocate(64, disp_unit=8, info={'onesided_notifications': '1'})\n"
        + "ready()\n"
        + "win.Wait_notify(0, 1)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(RANKS), *filter(None, [os.environ.get("PYTHONPATH")])]))
    proc = subprocess.Popen([sys.executable, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    try:
        assert proc.stdout.readline().startswith("READY")
        assert proc.stdout.readline().strip() == "INSIDE"
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=DEADLINE)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = proc.stderr.read()
    assert proc.returncode != 0
    assert "KeyboardInterrupt" in err and "Wait_notify" in err, err
    # The process's exit (interpreter teardown included) within the bound too.
    assert took < BOUND + SLACK, f"exited {took:.3f} s after SIGINT"
    print(f"uncaught Wait_notify: exited {took * 1000:.1f} ms after SIGINT")


# ---- two ranks: the call waits for a peer that does not come ----------------


@pytest.mark.parametrize("locks", ["shared_memory", "messages"])
def test_lock_waiting_for_the_lock(tmp_path: Path, locks: str) -> None:
    info = {} if locks == "shared_memory" else {"onesided_shared_memory": "off"}
    took, out, err = interrupt(
        f"""
        win = onesided.Window.Allocate(64, disp_unit=8, info={info!r})
        if rank == 1:
            win.Lock(0, onesided.LOCK_EXCLUSIVE)
        onesided.COMM_WORLD.Barrier()
        if rank == 0:
            ready()
            try:
                win.Lock(0, onesided.LOCK_EXCLUSIVE)
            except KeyboardInterrupt:
                caught()
        onesided.COMM_WORLD.Barrier()
        if rank == 1:
            win.Unlock(0)
        # The request stayed in line: Unlock waits for the grant and releases.
        if rank == 0:
            win.Unlock(0)
            win.Lock(0, onesided.LOCK_EXCLUSIVE)
            win.Unlock(0)
        win.Free()
        print("AFTER OK", flush=True)
        """,
        tmp_path,
        ranks=2,
    )
    assert_interrupted(took, err, "Lock")
    assert out.count("AFTER OK") == 2, out


def test_lock_all_waiting_for_a_lock(tmp_path: Path) -> None:
    took, out, err = interrupt(
        """
        win = onesided.Window.Allocate(64, disp_unit=8)
        if rank == 1:
            win.Lock(1, onesided.LOCK_EXCLUSIVE)
        onesided.COMM_WORLD.Barrier()
        if rank == 0:
            ready()
            try:
                win.Lock_all()
            except KeyboardInterrupt:
                caught()
        onesided.COMM_WORLD.Barrier()
        if rank == 1:
            win.Unlock(1)
        if rank == 0:
            win.Unlock_all()
            win.Lock_all()
            win.Unlock_all()
        win.Free()
        print("AFTER OK", flush=True)
        """,
        tmp_path,
        ranks=2,
    )
    assert_interrupted(took, err, "Lock_all")
    assert out.count("AFTER OK") == 2, out


@pytest.mark.parametrize("call", ["req.Wait()", "win.Flush(1)", "onesided.Request.Waitall([req])"])
def test_waiting_for_a_stopped_target(tmp_path: Path, call: str) -> None:
    """Software atomics need the target's progress: with the target stopped
    (SIGSTOP, seen in /proc before anything is issued) the request never
    completes until SIGCONT; interrupted, it is still pending and completes."""
    took, out, err = interrupt(
        f"""
        info = {{"onesided_shared_memory": "off", "onesided_atomics": "software"}}
        win = onesided.Window.Allocate(64, disp_unit=8, info=info)
        pids = onesided.COMM_WORLD.allgather(os.getpid())
        if rank == 0:
            one, old = np.ones(1, np.int64), np.zeros(1, np.int64)
            win.Lock_all()
            os.kill(pids[1], signal.SIGSTOP)
            while open(f"/proc/{{pids[1]}}/stat").read().rpartition(")")[2].split()[0] != "T":
                pass
            req = win.Rget_accumulate(one, old, 1)
            ready()
            try:
                {call}
            except KeyboardInterrupt:
                caught()
            os.kill(pids[1], signal.SIGCONT)
            req.Wait()
            win.Flush(1)
            win.Unlock_all()
            assert old[0] == 0, old
        onesided.COMM_WORLD.Barrier()
        win.Free()
        print("AFTER OK", flush=True)
        """,
        tmp_path,
        ranks=2,
    )
    assert_interrupted(took, err, call.split("(")[0].split(".")[-1])
    assert out.count("AFTER OK") == 2, out


def _peer_absent(call: str, setup: str, after: str, tmp_path: Path, whole: bool = False) -> tuple[float, str, str]:
    return interrupt(
        f"""
        {setup}
        if rank == 1:
            peer_waits()
        ready()
        try:
            {call}
        except KeyboardInterrupt:
            caught()
        {after}
        print("AFTER OK", flush=True)
        """,
        tmp_path,
        ranks=2,
        peer=True,
        whole=whole,
    )


def test_fence_without_the_peer(tmp_path: Path) -> None:
    took, _, err = _peer_absent(
        "win.Fence()",
        "win = onesided.Window.Allocate(64, disp_unit=8)",
        # The world is unusable (the barrier's stream position is lost); the
        # window's own calls that need no peer still work, and Free raises.
        "print('WORLD', onesided.COMM_WORLD)",
        tmp_path,
    )
    assert_interrupted(took, err, "Fence")


def test_free_without_the_peer(tmp_path: Path) -> None:
    took, _, err = _peer_absent(
        "win.Free()",
        "win = onesided.Window.Allocate(64, disp_unit=8)",
        # This rank's part is released: the window is freed here.
        "assert not win; win.free()",
        tmp_path,
    )
    assert_interrupted(took, err, "Free")


def test_creation_without_the_peer(tmp_path: Path) -> None:
    took, _, err = _peer_absent("onesided.Window.Allocate(64, disp_unit=8)", "", "", tmp_path)
    assert_interrupted(took, err, "Allocate")


def test_comm_world_collective_without_the_peer(tmp_path: Path) -> None:
    took, _, err = _peer_absent("onesided.COMM_WORLD.allgather(rank)", "", "", tmp_path)
    assert_interrupted(took, err, "allgather")


def test_nothing_left_in_dev_shm() -> None:
    """Runs last in this file: every job above ended, none left a file of
    onesided's (bells are named after pids of processes that are gone)."""
    left = [
        p.name
        for p in Path("/dev/shm").iterdir()
        if p.name.startswith("onesided-") and not _alive(p.name.rsplit("-", 1)[-1])
    ]
    assert not left, left


def _alive(pid: str) -> bool:
    return pid.isdigit() and Path(f"/proc/{pid}").exists()
