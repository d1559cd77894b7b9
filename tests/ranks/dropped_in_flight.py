"""A window dropped while its operations are still in flight: rank 0 puts
to rank 1 while rank 1 is stopped (SIGSTOP: its progress cannot complete
them), drops the window without Free, then lets rank 1 go on, so that the
operations' completions reach rank 0 after its window is gone. Then a
round trip through a second window, queued behind them at rank 1, makes
sure rank 0 has dispatched those completions before it says PASS.
tests/test_teardown.py runs it."""

from __future__ import annotations

import gc
import os
import signal

import numpy as np

import onesided
from harness import comm, info, run


def stopped(pid: int) -> bool:
    """Whether process ``pid`` is stopped (its state in /proc is T)."""
    stat = open(f"/proc/{pid}/stat").read()
    return stat.rpartition(")")[2].split()[0] == "T"


def check_dropped() -> None:
    c = comm()
    pids = c.allgather(os.getpid())
    win = onesided.Window.Allocate(64, disp_unit=8, info=info(onesided_shared_memory="off"), comm=c)
    assert win.Get_info()["onesided_path"] == "provider", win.Get_info()["onesided_path"]
    c.Barrier()
    if c.Get_rank() == 0:
        win.Lock_all()  # granted while rank 1 still runs
        os.kill(pids[1], signal.SIGSTOP)
        while not stopped(pids[1]):
            pass
        for i in range(32):
            win.Put(np.array([i], np.int64), 1, i % 8)
        del win  # in an open epoch, its puts waiting for rank 1: no Free can complete
        gc.collect()  # the window's own methods refer to it: the collector drops it
        os.kill(pids[1], signal.SIGCONT)
    c.Barrier()
    # A get from rank 1, behind the puts in rank 1's queue: its answer comes
    # after their completions, which rank 0 has dispatched by then.
    second = onesided.Window.Allocate(8, disp_unit=8, info=info(onesided_shared_memory="off"), comm=c)
    got = np.zeros(1, np.int64)
    if c.Get_rank() == 0:
        with second.lock(1):
            second.Get(got, 1, 0)
    second.Free()
    # Rank 1's first window is never freed: rank 0 left it.


if __name__ == "__main__":
    run({"dropped": check_dropped})
