"""Teardown cases for tests/test_teardown.py. Usage: teardown.py MODE

  die-ValueError, die-KeyboardInterrupt
      rank 0 raises that exception, uncaught, while rank 1 waits in
      MPI.COMM_WORLD's Barrier (MPICH's MPI_Finalize would wait for it).
  with-alone
      rank 0 leaves a `with` window block by an exception; rank 1 never
      frees its window (it waits until rank 0 says DONE through a file).
  with-all
      every rank leaves its `with` block by the same exception.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path

import onesided
from harness import comm as test_comm
from standstill import say

mode = sys.argv[1]
comm = test_comm()
rank = comm.Get_rank()
say(f"PID {rank} {os.getpid()}")

if mode.startswith("die-"):
    if rank == 0:
        say(f"RAISING {time.monotonic()!r}")
        raise {"ValueError": ValueError, "KeyboardInterrupt": KeyboardInterrupt}[mode[4:]]("rank 0 fails")
    comm.Barrier()  # never completes: rank 0 is gone
    sys.exit(7)

done = Path(os.environ["TEARDOWN_DIR"], "done")
win = onesided.Window.Allocate(64, disp_unit=8, comm=comm)
if mode == "with-alone" and rank == 1:
    while not done.exists():
        time.sleep(0.01)  # polling rank 0's file: the only channel left that does not need rank 0's Free
    sys.exit(0)
start = time.monotonic()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        with win:
            raise ValueError("the block fails")
    except ValueError:
        pass
took = time.monotonic() - start
say(f"FREED {not win} {took:.3f}")
for w in caught:
    say(f"WARNED {w.category.__name__}: {w.message}")
if rank == 0:
    done.touch()
