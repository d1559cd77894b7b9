"""Rank program for tests/test_message_flood.py: many software atomics in
flight at once, then one Flush. Each is a message the target answers, so
both ranks' receive buffers run out and sends wait for the other side;
the flush must still complete (before receives were kept apart from
deferred sends, libfabric shm deadlocked here: each side's receive reposts
waited behind its own sends, which waited for the other side's receives).

Rank 0 issues COUNT Accumulates of 1 to rank 1's int64 counters, then
COUNT Get_accumulates of 0 (fetching), each under one Lock, and checks
every counter and every fetched value. Usage: message_flood.py COUNT.
Rank 0 prints "PASS flood COUNT"."""

from __future__ import annotations

import sys

import numpy as np

import harness
import onesided
from onesided import Window

comm = harness.comm()
rank = comm.Get_rank()
COUNT = int(sys.argv[1])
SLOTS = 1024

win = Window.Allocate(SLOTS * 8, 8, info=harness.info(onesided_atomics="software"), comm=comm)
harness.check_provider(win)
assert win.Get_info()["atomics"] == "software", win.Get_info()["atomics"]
np.frombuffer(win.tomemory(), np.int64)[:] = 0
comm.Barrier()
if rank == 0:
    one = np.ones(1, np.int64)
    win.Lock(1)
    for i in range(COUNT):
        win.Accumulate(one, 1, i % SLOTS, onesided.SUM)
    win.Flush(1)
    zero = np.zeros(1, np.int64)
    fetched = np.full(COUNT, -1, np.int64)
    for i in range(COUNT):
        win.Get_accumulate(zero, fetched[i : i + 1], 1, i % SLOTS, onesided.SUM)
    win.Flush(1)
    win.Unlock(1)
    expected = np.bincount(np.arange(COUNT) % SLOTS, minlength=SLOTS)
    assert np.array_equal(fetched, expected[np.arange(COUNT) % SLOTS]), "fetched values"
comm.Barrier()
if rank == 1:
    mem = np.frombuffer(win.tomemory(), np.int64)
    assert np.array_equal(mem, np.bincount(np.arange(COUNT) % SLOTS, minlength=SLOTS)), "counters"
comm.Barrier()
win.Free()
if rank == 0:
    print(f"PASS flood {COUNT}", flush=True)
