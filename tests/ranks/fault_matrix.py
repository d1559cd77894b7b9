"""One cell of the fault matrix (tests/test_fault_matrix.py): two ranks, rank
0 standing in STATE, rank 1 busy in a Python loop that never reaches the
call rank 0 waits for. The test then signals the launcher or a rank and
measures how long the job takes to end.

Usage: fault_matrix.py STATE, one of
  fence     rank 0 in Fence (rank 1 never enters it)
  pscw      rank 0 in Wait after Post (rank 1 never starts an epoch)
  lock      rank 0 in Lock(0), which rank 1 holds exclusively
  notify    rank 0 in Wait_notify for a notification rank 1 never sends
  request   rank 0 in a loop of Rget_accumulate(...).Wait() to rank 1 on the
            provider path (software atomics: every Wait waits for rank 1's
            progress thread); once rank 1 is dead, in a Wait that cannot end
  create    rank 0 in Window.Allocate (rank 1 never enters it)
  free      rank 0 in Free (rank 1 never enters it)
  busy      both ranks in a Python loop

Prints ``PID <rank> <pid>`` first, ``BUSY`` from a rank in its loop, and
READY/INSIDE (tests/ranks/standstill.py) from rank 0 at its call; never
returns from it on its own.
"""

from __future__ import annotations

import os
import sys

import numpy as np

import onesided
from harness import comm as test_comm
from harness import info
from standstill import ready, say

state = sys.argv[1]
comm = test_comm()
rank = comm.Get_rank()
say(f"PID {rank} {os.getpid()}")


def busy() -> None:
    say("BUSY")
    n = 0
    while True:  # Python bytecode only: the GIL held, signals handled between
        n += 1


hints = {"notify": {"onesided_notifications": "1"}, "request": {"onesided_shared_memory": "off"}}
win = None if state == "create" else onesided.Window.Allocate(64, disp_unit=8, info=info(**hints.get(state, {})), comm=comm)
if state == "lock":
    if rank == 1:
        win.Lock(0)
    comm.Barrier()  # rank 1 holds the lock before rank 0 asks for it
if state == "request" and rank == 0:
    win.Lock_all()
if rank == 1 or state == "busy":
    busy()

one, got = np.ones(1, np.int64), np.zeros(1, np.int64)
if state == "request":
    # Many Waits first, so INSIDE cannot come from a single slow one.
    for _ in range(100):
        win.Rget_accumulate(one, got, 1, 0, op=onesided.SUM).Wait()
ready()
if state == "fence":
    win.Fence()
elif state == "pscw":
    win.Post(win.Get_group().Incl([1]))
    win.Wait()
elif state == "lock":
    win.Lock(0)
elif state == "notify":
    win.Wait_notify(0, 1)
elif state == "request":
    while True:
        win.Rget_accumulate(one, got, 1, 0, op=onesided.SUM).Wait()
elif state == "create":
    onesided.Window.Allocate(64, disp_unit=8, comm=comm)
elif state == "free":
    win.Free()
say("RETURNED")  # a wait that ended without its peer: wrong
sys.exit(5)
