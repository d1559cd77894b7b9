"""Rank programs for tests/test_request_atomics.py and tests/test_async.py:
request-based fetching atomics and awaited requests between real ranks.

Usage: request_atomics.py CHECK (the checks below)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

import numpy as np

import harness
import onesided
from onesided import Window

comm = harness.comm()
rank, size = comm.Get_rank(), comm.Get_size()
INFO = harness.info()


def check_tickets() -> None:
    """Every rank takes N tickets from rank 0's counter with Rfetch_and_op
    (SUM 1) and adds M to a second counter through Rcompare_and_swap retry
    loops. Each result is read right after its completion is reported (by
    Wait, a Test loop, or Waitall): the tickets of all ranks are exactly
    0 .. size*N-1, each once, and the second counter is exactly size*M."""
    n, m = 300, 60
    win = Window.Allocate(16, disp_unit=8, info=INFO, comm=comm)
    harness.check_provider(win)
    mem = np.frombuffer(win, np.int64)
    comm.Barrier()
    one = np.ones(1, np.int64)
    tickets: list[int] = []
    win.Lock_all()
    batch: list[tuple[onesided.Request, np.ndarray]] = []
    for i in range(n):
        res = np.full(1, -1, np.int64)
        r = win.Rfetch_and_op(one, res, 0, 0, onesided.SUM)
        if i % 3 == 0:
            r.Wait()
            assert res[0] >= 0, "Wait returned before the result was written"
            tickets.append(int(res[0]))
        elif i % 3 == 1:
            while not r.Test():
                pass
            assert res[0] >= 0, "Test returned True before the result was written"
            tickets.append(int(res[0]))
        else:
            batch.append((r, res))
    onesided.Request.Waitall([r for r, _ in batch])
    for _, res in batch:
        assert res[0] >= 0, "Waitall returned before a result was written"
        tickets.append(int(res[0]))
    for _ in range(m):
        guess = 0
        while True:
            res = np.full(1, -1, np.int64)
            r = win.Rcompare_and_swap(np.array([guess + 1], np.int64), np.array([guess], np.int64), res, 0, 1)
            r.Wait()
            assert res[0] >= 0, "Wait returned before the compare-and-swap result was written"
            if res[0] == guess:
                break
            guess = int(res[0])
    win.Unlock_all()
    everyone = sorted(t for ts in comm.allgather(tickets) for t in ts)
    assert everyone == list(range(size * n)), ("tickets not unique and exact", everyone[:20])
    comm.Barrier()
    if rank == 0:
        win.Sync()
        assert mem[0] == size * n and mem[1] == size * m, mem[:2]
    comm.Barrier()
    win.Free()


CHECKS = {"tickets": check_tickets}

if __name__ == "__main__":
    name = sys.argv[1]
    CHECKS[name]()
    comm.Barrier()
    if rank == 0:
        print(f"PASS {name}")
