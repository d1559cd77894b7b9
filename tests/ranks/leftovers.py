"""A rank is SIGKILLed after window creation; nothing of onesided's may stay
in /dev/shm, with no sweep (issue 25, item 5). tests/test_leftovers.py runs
it under mpiexec, where no onesided launcher sweeps after the job.

Usage: leftovers.py FLAVOR NOTIFY. FLAVOR one of allocate (the shared-memory
path: one segment), allocate_shared, create (cross-memory attach: a small
segment of locks), dynamic (lock words in a small segment); NOTIFY 0 or 1
(notification counters: in the segment on the shared-memory path).

Every rank prints "PID <pid>". After creation rank 0 prints "NAMED <names>":
the /dev/shm entries that carry a rank's pid in an onesided name (none: its
memory never has a name), and each rank prints "MEMFD <n>", how many
nameless onesided mappings (segment or doorbell) it has, so the test knows
the window did share memory. Then rank 1 prints "KILL" and SIGKILLs itself;
rank 0 waits in a barrier for the launcher to stop it.
"""

from __future__ import annotations

import os
import signal
import sys

import numpy as np

import onesided
from harness import comm as test_comm
from harness import info

flavor, notify = sys.argv[1], sys.argv[2] == "1"
comm = test_comm()
rank = comm.Get_rank()
print(f"PID {os.getpid()}", flush=True)
extra = {"onesided_notifications": "4"} if notify else {}
if flavor == "allocate":
    win = onesided.Window.Allocate(64, disp_unit=8, info=info(**extra), comm=comm)
elif flavor == "allocate_shared":
    win = onesided.Window.Allocate_shared(64, disp_unit=8, info=info(**extra), comm=comm)
elif flavor == "create":
    memory = np.zeros(8, np.int64)
    win = onesided.Window.Create(memory, disp_unit=8, info=info(**extra), comm=comm)
else:
    memory = np.zeros(8, np.int64)
    win = onesided.Window.Create_dynamic(info=info(**extra), comm=comm)
    win.Attach(memory)
# A dynamic window's displacements are addresses; the others' start at 0.
disp = comm.allgather(onesided.Get_address(memory))[1 - rank] if flavor == "dynamic" else 0
win.Lock_all()  # the window is used: locks, doorbells and segments are live
win.Accumulate(np.ones(1, np.int64), 1 - rank, disp)
win.Flush(1 - rank)
win.Unlock_all()

pids = [str(p) for p in comm.allgather(os.getpid())]
comm.Barrier()
if rank == 0:
    named = [n for n in os.listdir("/dev/shm") if n.startswith("onesided-") for p in pids if p in n.split("-")]
    print(f"NAMED {' '.join(named)}", flush=True)
with open("/proc/self/maps") as maps:
    print(f"MEMFD {sum('/memfd:onesided-' in line for line in maps)}", flush=True)
comm.Barrier()
if rank == 1:
    print("KILL", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
comm.Barrier()  # never passes: the launcher stops this rank when rank 1 dies
