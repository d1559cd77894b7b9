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
"""

from __future__ import annotations

import os
import sys
import time

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
else:
    raise SystemExit(f"unknown mode {mode!r}")
