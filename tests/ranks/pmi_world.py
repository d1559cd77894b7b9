"""onesided.COMM_WORLD formed through the launcher's PMI, with mpi4py not
importable (tests/test_pmi_world.py runs this under hydra and Open MPI's
mpirun, and the lead's srun tests may too).

Usage: LAUNCHER python pmi_world.py MODE

* ``tickets``: every rank checks that mpi4py really is hidden and that its
  world is a onesided Comm the size of the job, says which interface formed
  it, then takes one ticket from rank 0's counter by Fetch_and_op under
  Lock_all; prints ``RANK R SIZE N VIA <interface> TICKET T``.
* ``rank0-silent``: rank 0 exits before touching onesided; every other rank
  asks for COMM_WORLD and prints ``REFUSED R <seconds> <message>``.
* ``rank0-gone``: rank 0 publishes a coordinator that it then stops, and
  leaves (as a rank 0 dying right after publishing would); the others print
  ``REFUSED R <seconds> <message>`` as above.
* ``rank0-leaves-first DIR``: the world formed, rank 0 writes DIR/rank0-done
  and exits; every other rank then calls Barrier (prints ``REFUSED ...``),
  and waits for rank 0's process to end (it must keep serving until this
  rank has gone, up to ONESIDED_PMI_TIMEOUT): prints ``SURVIVED R <seconds>``,
  how long rank 0 lived after its file appeared (or 20 if it outlived that).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

mode = sys.argv[1]

try:
    import mpi4py  # noqa: F401
except ImportError:
    pass
else:
    raise SystemExit("mpi4py is importable: the test's shim did not hide it")

import numpy as np

import onesided
from onesided.comm import _pmi_world
from onesided.comm._comm import Comm, WorldError
from onesided.comm._coordinator import Coordinator

def wait_for(condition, seconds: float) -> float:
    """Poll ``condition`` every 10 ms until it holds or ``seconds`` pass; the time it held."""
    end = time.monotonic() + seconds
    while not condition() and time.monotonic() < end:
        time.sleep(0.01)
    return time.monotonic()


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, which its launcher has yet to reap, has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # gone before the open or before the read
        return False


rank = int(os.environ.get("PMI_RANK", os.environ.get("PMIX_RANK", os.environ.get("OMPI_COMM_WORLD_RANK", "-1"))))

if mode == "tickets":
    world = onesided.COMM_WORLD
    assert type(world) is Comm, type(world)
    win = onesided.Window.Allocate(8, disp_unit=8)
    one, ticket = np.ones(1, np.int64), np.zeros(1, np.int64)
    with win.lock_all():
        win.Fetch_and_op(one, ticket, 0)
        win.Flush(0)
    win.Free()
    print(f"RANK {world.rank} SIZE {world.size} VIA {_pmi_world.formed_by()} TICKET {ticket[0]}", flush=True)
elif mode in ("rank0-silent", "rank0-gone"):
    if rank == 0:
        if mode == "rank0-gone":
            client = _pmi_world.pmi_client(os.environ, "test", _pmi_world.bootstrap_timeout(os.environ))
            with Coordinator(client.size, b"0" * 32, "0.0.0.0") as coordinator:
                port = int(coordinator.address.rpartition(":")[2])
            _pmi_world.publish(client, port, "0" * 32)
            client.finalize()
        sys.exit(0)
    start = time.monotonic()
    try:
        onesided.COMM_WORLD.Barrier()
    except WorldError as exc:
        print(f"REFUSED {rank} {time.monotonic() - start:.2f} {exc}", flush=True)
    else:
        raise SystemExit(f"rank {rank} formed a world without rank 0")
elif mode == "rank0-leaves-first":
    world = onesided.COMM_WORLD
    pids = world.allgather(os.getpid())
    done = Path(sys.argv[2]) / "rank0-done"
    if world.rank == 0:
        done.write_text("")
        sys.exit(0)
    seen = wait_for(done.exists, 30)
    start = time.monotonic()
    try:
        world.Barrier()
    except WorldError as exc:
        print(f"REFUSED {world.rank} {time.monotonic() - start:.2f} {exc}", flush=True)
    wait_for(lambda: not alive(pids[0]), 20)
    print(f"SURVIVED {world.rank} {time.monotonic() - seen:.2f}", flush=True)
else:
    raise SystemExit(f"unknown mode {mode!r}")
