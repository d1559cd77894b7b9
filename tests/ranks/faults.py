"""A rank dies (SIGKILL) in a given synchronisation state; the survivors
must end within seconds: raise a onesided.Error naming the dead rank, or be
stopped by whatever started them. tests/test_faults.py runs it.

Usage: faults.py STATE PATH, STATE one of lock, lock_all, flush, request
(Request.Wait), request_test (a Request.Test loop), waitall
(Request.Waitall), fence, pscw; PATH shared
(Allocate: the shared-memory path) or provider (Create over libfabric). Rank 1 dies; rank 0 is the survivor and prints
"SURVIVOR <error class>: <message>" if it gets an error.
"""

from __future__ import annotations

import os
import signal
import sys
import time

import numpy as np

import onesided
from harness import comm as test_comm
from harness import info

state, path = sys.argv[1], sys.argv[2]
comm = test_comm()
rank = comm.Get_rank()
print(f"PID {os.getpid()}", flush=True)
extra = {} if path == "shared" else {"onesided_shared_memory": "off"}
win = onesided.Window.Allocate(64, disp_unit=8, info=info(**extra), comm=comm)
one, got = np.ones(1, np.int64), np.zeros(1, np.int64)


def die() -> None:
    print(f"KILL {time.time():.3f}", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)


try:
    if state == "lock":
        # Rank 1 holds rank 0's window lock and dies holding it.
        if rank == 1:
            win.Lock(0)
            comm.Barrier()
            die()
        comm.Barrier()
        win.Lock(0)
    elif state == "lock_all":
        if rank == 1:
            win.Lock(0)
            comm.Barrier()
            die()
        comm.Barrier()
        win.Lock_all()
    elif state == "flush":
        # Rank 0 targets rank 1 after rank 1 died (its progress is gone).
        comm.Barrier()
        if rank == 1:
            die()
        win.Lock_all()
        for _ in range(100000):
            win.Fetch_and_op(one, got, 1, 0)
            win.Flush(1)
        win.Unlock_all()
    elif state in ("request", "request_test", "waitall"):
        # Rank 0 waits on requests to rank 1 after rank 1 died: a get and a
        # get-accumulate (which needs the target's progress on every path).
        # Its epoch is open before the death, so nothing but the requests
        # waits for rank 1.
        if rank == 0:
            win.Lock_all()
        comm.Barrier()
        if rank == 1:
            die()
        def complete(request: onesided.Request) -> None:
            if state == "request":
                request.Wait()
            elif state == "waitall":
                onesided.Request.Waitall([request])
            else:  # the Test loop Waitany runs
                while not request.Test():
                    pass

        for _ in range(100000):
            complete(win.Rget(got, 1, 0))
            complete(win.Rget_accumulate(one, got, 1, 0, op=onesided.SUM))
        win.Unlock_all()
    elif state == "fence":
        win.Fence()
        if rank == 1:
            die()
        win.Fence()
    elif state == "pscw":
        if rank == 1:
            die()
        win.Post([1])
        win.Wait()
    print("SURVIVOR finished without error", flush=True)
except onesided.Error as e:
    print(f"SURVIVOR {type(e).__name__}: {e}", flush=True)
    print(f"RAISED {time.time():.3f}", flush=True)
    if os.environ.get("FAULTS_UNSUPERVISED"):
        # Nothing stops this rank, and MPI_Finalize would wait for the dead
        # one: leave at once.
        os._exit(3)
    sys.exit(3)
