"""A rank on another host dies, is cut off, or is merely busy, while the
other ranks wait on it; tests/test_peer_death.py starts the ranks on
simulated hosts around onesided's coordinator, with nothing that would
stop the survivors.

Usage: peer_death.py STATE MODE. Rank 1 is the victim; every other rank is
a survivor and waits on it in STATE:

  lock          Lock(0) while rank 1 holds it
  flush         Fetch_and_op to rank 1 and Flush(1), in a loop
  request       Rget_accumulate to rank 1, Request.Wait, in a loop
  request_test  the same with a Request.Test loop
  waitall       Request.Waitall of an Rget and an Rget_accumulate to rank 1, in a loop
  pscw          Post([1]) then Wait for rank 1's Complete
  notify        Wait_notify for a notification from rank 1
  fence         a Fence rank 1 never joins

MODE says what happens to rank 1 once the survivors wait on it:

  kill   it prints "KILL <time>" and SIGKILLs itself
  cut    it prints "CUT" and waits for a notification no one sends; the
         driver takes its host's link down; it must find its peers
         unreachable and prints "VICTIM <error>"
  busy   it holds the GIL in a Python loop for BUSY seconds, then does
         what the survivors wait for (no one may call it dead)
  stop   it prints "HOLD" and reads a line of stdin; the driver stops it
         (SIGSTOP) for a while, resumes it and writes that line; then it
         does what the survivors wait for

A survivor prints "SURVIVOR <error class>: <message>" and "RAISED <time>"
(then stays until its stdin closes), or "SURVIVOR finished without error"
and "WAITED <seconds>".
"""

from __future__ import annotations

import os
import signal
import sys
import time

import numpy as np

import onesided
from harness import comm as test_comm

BUSY = 8.0  # seconds: over twice the default peer timeout (3 s)
FOREVER = 60.0  # a loop that outlives this has seen no death

state, mode = sys.argv[1], sys.argv[2]
comm = test_comm()
rank, size = comm.Get_rank(), comm.Get_size()
survivors = [r for r in range(size) if r != 1]
print(f"PID {os.getpid()}", flush=True)
win = onesided.Window.Allocate(64, disp_unit=8, info={"onesided_notifications": "1"}, comm=comm)
one, got = np.ones(1, np.int64), np.zeros(1, np.int64)


def victim_end() -> None:
    """What happens to rank 1 once the survivors wait (or are about to)."""
    if mode == "kill":
        print(f"KILL {time.time():.3f}", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "cut":
        print("CUT", flush=True)
        try:
            win.Wait_notify(0, 1)  # nobody notifies: only the cut ends it
        except onesided.Error as e:
            print(f"VICTIM {type(e).__name__}: {e}", flush=True)
        os._exit(3)
    if mode == "stop":
        print("HOLD", flush=True)
        sys.stdin.readline()  # the driver stops this process meanwhile
    else:
        end = time.monotonic() + BUSY
        while time.monotonic() < end:  # holds the GIL: no other Python runs here
            pass
    # Then what the survivors wait for.
    if state == "lock":
        win.Unlock(0)
    elif state == "pscw":
        win.Start(survivors)
        win.Complete()
    elif state == "notify":
        for r in survivors:
            win.Put_notify(one, r, 0, 0)
        win.Flush_all()
    elif state == "fence":
        win.Fence()


def survive() -> None:
    """Wait on rank 1 in `state`."""
    deadline = time.monotonic() + FOREVER
    if state == "lock":
        win.Lock(0)
        win.Unlock(0)
    elif state == "flush":
        win.Lock_all()
        while time.monotonic() < deadline:
            win.Fetch_and_op(one, got, 1, 0)
            win.Flush(1)
        win.Unlock_all()
    elif state in ("request", "request_test", "waitall"):
        win.Lock_all()
        while time.monotonic() < deadline:
            if state == "waitall":
                onesided.Request.Waitall([win.Rget(got, 1, 0), win.Rget_accumulate(one, np.zeros(1, np.int64), 1, 1)])
                continue
            request = win.Rget_accumulate(one, got, 1, 0, op=onesided.SUM)
            if state == "request":
                request.Wait()
            else:
                while not request.Test():
                    pass
        win.Unlock_all()
    elif state == "pscw":
        win.Post([1])
        win.Wait()
    elif state == "notify":
        win.Wait_notify(0, 1)
    elif state == "fence":
        win.Fence()


win.Fence()
if rank == 1 and state == "lock":
    win.Lock(0)  # held until rank 1's end
comm.Barrier()
if rank == 1:
    victim_end()
    win.Free()
    sys.exit(0)
started = time.monotonic()
try:
    survive()
    print("SURVIVOR finished without error", flush=True)
    print(f"WAITED {time.monotonic() - started:.2f}", flush=True)
except onesided.Error as e:
    print(f"SURVIVOR {type(e).__name__}: {e}", flush=True)
    print(f"RAISED {time.time():.3f}", flush=True)
    # Stay until the driver has every survivor's verdict (it closes stdin):
    # a survivor that left now would be a second dead rank for the others.
    sys.stdin.read()
    os._exit(3)  # Free would wait for the dead rank: leave at once
win.Free()
