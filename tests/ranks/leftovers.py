"""A rank is SIGKILLed after window creation; nothing of onesided's may stay
in /dev/shm, with no sweep (issue 25, item 5). tests/test_leftovers.py runs
it under mpiexec, where no onesided launcher sweeps after the job.

Usage: leftovers.py FLAVOR NOTIFY OUT. FLAVOR one of allocate (the shared-memory
path: one segment), allocate_shared, create (cross-memory attach: a small
segment of locks), create_alloc_mem (Create over onesided.Alloc_mem: the
shared-memory path over each rank's block, which the other maps, and a
control segment), dynamic (lock words in a small segment); NOTIFY 0 or 1
(notification counters: in the segment on the shared-memory path); OUT a
folder for the report.

After creation each rank writes OUT/rank<r>.txt (a file, since mpiexec
drops output still in flight when it kills a job): "PID <pid>", "MEMFD <n>",
how many nameless onesided mappings (segment or doorbell) it has, so the
test knows the window did share memory, and on rank 0 "NAMED <names>", the
/dev/shm entries that carry a rank's pid in an onesided name (none: its
memory never has a name). Then rank 1 SIGKILLs itself; rank 0 waits in a
barrier for the launcher to stop it.
"""

from __future__ import annotations

import os
import signal
import sys

import numpy as np

import onesided
from harness import comm as test_comm
from harness import info

flavor, notify, out = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
comm = test_comm()
rank = comm.Get_rank()
extra = {"onesided_notifications": "4"} if notify else {}
if flavor == "allocate":
    win = onesided.Window.Allocate(64, disp_unit=8, info=info(**extra), comm=comm)
elif flavor == "allocate_shared":
    win = onesided.Window.Allocate_shared(64, disp_unit=8, info=info(**extra), comm=comm)
elif flavor == "create":
    memory = np.zeros(8, np.int64)
    win = onesided.Window.Create(memory, disp_unit=8, info=info(**extra), comm=comm)
elif flavor == "create_alloc_mem":
    memory = np.frombuffer(onesided.Alloc_mem(64), np.int64)
    win = onesided.Window.Create(memory, disp_unit=8, info=info(**extra), comm=comm)
    assert win.Get_info()["onesided_path"] == "shared-memory", win.Get_info()["onesided_path"]
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
with open("/proc/self/maps") as maps:
    report = [f"PID {os.getpid()}", f"MEMFD {sum('/memfd:onesided-' in line for line in maps)}"]
if rank == 0:
    named = [n for n in os.listdir("/dev/shm") if n.startswith("onesided-") for p in pids if p in n.split("-")]
    report.append(f"NAMED {' '.join(named)}")
with open(os.path.join(out, f"rank{rank}.txt"), "w") as f:
    f.write("\n".join(report) + "\n")
comm.Barrier()
if rank == 1:
    os.kill(os.getpid(), signal.SIGKILL)
comm.Barrier()  # never passes: the launcher stops this rank when rank 1 dies
