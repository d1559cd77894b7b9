"""The launcher across (simulated) hosts: tests/test_multihost.py.

Usage: python -m onesided run ... multihost_job.py [fail]

Every rank prints ``RANK <r> host=<hostname> cwd=<cwd> mark=<$ONESIDED_TEST_MARK>
iface=<$FI_TCP_IFACE>``
on stdout and ``STDERR <r>`` on stderr, so the driver sees that output,
the working directory and the environment come back from every host. With
``fail`` the last rank exits with status 3 once every rank has started and
the others wait to be stopped: the launcher must stop them on every host.
"""

from __future__ import annotations

import os
import socket
import sys
import time

import onesided

comm = onesided.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
print(f"RANK {rank} host={socket.gethostname()} cwd={os.getcwd()} mark={os.environ.get('ONESIDED_TEST_MARK')} "
      f"iface={os.environ.get('FI_TCP_IFACE')}", flush=True)
print(f"STDERR {rank}", file=sys.stderr, flush=True)
comm.Barrier()
if sys.argv[1:] == ["fail"]:
    if rank == size - 1:
        sys.exit(3)
    time.sleep(300)  # stopped by the launcher, which the test times
