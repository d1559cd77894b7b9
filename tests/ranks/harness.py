"""What every rank program shares: the communicator and the window info the
test asked for (through the environment set by tests/conftest.py), the
ticket check, and the entry point that runs one named check."""

from __future__ import annotations

import os
import signal
import sys
import time
from typing import Any, Callable

import numpy as np

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


def take_tickets(win: onesided.Window, n: int) -> list[int]:
    """Takes `n` tickets from rank 0's int64 counter (displacement 0) with
    Fetch_and_op SUM under Lock_all, at every rank of the window's group
    (rank 0 included, on its own window). Collective: every rank's tickets
    together are exactly 0 .. size*n-1, each once (a lost or torn update
    would repeat or skip one), else AssertionError at every rank."""
    c = comm()
    one, res = np.ones(1, np.int64), np.zeros(1, np.int64)
    got = []
    c.Barrier()
    with win.lock_all():
        for _ in range(n):
            win.Fetch_and_op(one, res, 0, 0, onesided.SUM)
            got.append(int(res[0]))
    everyone = sorted(t for ts in c.allgather(got) for t in ts)
    assert everyone == list(range(c.Get_size() * n)), ("tickets not exact and unique", everyone[:20])
    return got


def stop(pid: int) -> None:
    """SIGSTOPs ``pid`` and returns once every thread of it is stopped.
    kill() returns when the signal is queued; a thread running on the other
    core (the progress thread) stops only at its next return to user mode,
    and could serve one more operation in between."""
    os.kill(pid, signal.SIGSTOP)
    deadline = time.monotonic() + 10
    while True:
        states = []
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    states.append(f.read().rsplit(")", 1)[1].split()[0])
            except (FileNotFoundError, ProcessLookupError):
                pass  # a thread that ended meanwhile (before the open, or before the read)
        if states and all(s in "tT" for s in states):
            return
        assert time.monotonic() < deadline, ("target never stopped", states)
        time.sleep(0.001)  # polling the observed state, not timing the target


def run(checks: dict[str, Callable[[], None]]) -> None:
    """Runs the check named by argv[1]; after every rank finished it, rank 0
    prints "PASS <name>" (what the tests look for)."""
    name = sys.argv[1]
    checks[name]()
    comm().Barrier()
    if comm().Get_rank() == 0:
        print(f"PASS {name}", flush=True)
