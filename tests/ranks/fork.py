"""A rank with a live window forks (issue 13, item 10: the doorbell and the
progress state are the parent's, never the child's). The child does
something harmless and leaves; the parent's window must keep working and
the child must leave nothing in /dev/shm; the parent's window, used from
the child, raises instead of polling or sending through the parent's
endpoint. On one host (PATH shared) the parent's doorbell is the same
after the child is gone, and the other rank maps it.
tests/test_fork.py runs it.

Usage: fork.py PATH EXIT. PATH shared or provider (as in faults.py); EXIT
how the child leaves: "_exit" (os._exit, as multiprocessing's fork children
do) or "exit" (sys.exit: Python's atexit handlers run, onesided's shutdown
among them, in a process whose progress thread was never started).
"""

from __future__ import annotations

import os
import sys

import numpy as np

import onesided
from harness import comm as test_comm
from harness import info

path, how = sys.argv[1], sys.argv[2]
comm = test_comm()
rank, size = comm.Get_rank(), comm.Get_size()
extra = {} if path == "shared" else {"onesided_shared_memory": "off"}
win = onesided.Window.Allocate(8 * size, disp_unit=8, info=info(**extra), comm=comm)
one, got = np.ones(1, np.int64), np.zeros(1, np.int64)
other = (rank + 1) % size

win.Lock_all()
win.Fetch_and_op(one, got, other, rank)
win.Flush(other)
comm.Barrier()

child = os.fork()
if child == 0:
    # Harmless: pure Python and numpy; then the parent's window, which must
    # refuse (its endpoint's queues are the parent's) rather than poll or send.
    assert int(np.arange(10).sum()) == 45 and bool(win)
    try:
        win.Fetch_and_op(one, got, other, rank)
        win.Flush(other)
        os._exit(5)
    except onesided.Error as e:
        if "fork" not in str(e):
            os._exit(6)
    if how == "_exit":
        os._exit(0)
    sys.exit(0)

def own_bells() -> list[int]:
    """Inodes of the doorbells this process holds a descriptor to: its own only."""
    inodes = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("/memfd:onesided-bell"):
                inodes.append(os.stat(f"/proc/self/fd/{fd}").st_ino)
        except OSError:
            pass  # the directory's own descriptor, gone by now
    return inodes


def mapped_bells() -> set[int]:
    """Inodes of the doorbells this process maps (its own and its peers')."""
    with open("/proc/self/maps") as maps:
        return {int(line.split()[4]) for line in maps if "/memfd:onesided-bell" in line}


bell = own_bells() if path == "shared" else []
_, status = os.waitpid(child, 0)
print(f"CHILD {child} STATUS {status}", flush=True)
assert status == 0, status
if path == "shared":
    # The parent's doorbell outlived the child: still this process's one
    # bell, and the other rank still maps it (rings reach it).
    assert len(bell) == 1 and own_bells() == bell, (bell, own_bells())
    theirs = comm.allgather(bell[0])[other]
    assert theirs in mapped_bells(), f"rank {other}'s bell {theirs} is not mapped here: {mapped_bells()}"
for _ in range(1000):  # the parent's progress keeps answering the other rank
    win.Fetch_and_op(one, got, other, rank)
    win.Flush(other)
comm.Barrier()
win.Unlock_all()
win.Fence()
mem = np.frombuffer(win.tomemory(), np.int64)
assert mem[other] == 1001, mem  # the other rank's 1001 increments of our slot
win.Fence()
win.Free()
print("PARENT OK", flush=True)
