"""The collectives a window runs over an mpi4py communicator, interruptible.

A window's creation, ``Fence`` and ``Free`` need an allgather or a barrier
over the window's communicator, and creation first a duplicate of it.
mpi4py's ``Dup``, ``Barrier`` and ``allgather`` wait inside MPI and return
to Python only when every rank has joined: a rank waiting there for a peer
that never comes ignores Ctrl-C and ``SIGTERM``'s Python handler alike, and
a job under ``mpiexec`` whose ranks wait in ``Fence`` never ends (issue 25).
This module runs the same collectives as MPI's non-blocking ones
(``Idup``, ``Ibarrier``, ``Iallgather`` of the sizes then ``Iallgatherv``
of the bytes) and waits for them in Python, so that the interpreter runs
signal handlers between tests.

Guarantees
----------
* The same collective as mpi4py's blocking call: every rank of the
  communicator must call it, in the same order; the result is the same.
* A signal handler that raises (``KeyboardInterrupt`` for SIGINT) raises out
  of the wait within about 10 ms. The collective is then cut in the middle:
  this rank posted its part and will never complete it, so the
  communicator (a window's own duplicate of the caller's) must not be used
  for another collective (docs/semantics.md, "Interrupted calls").
* Latency: the first second of a wait tests in a loop (what MPI's own
  blocking wait does), yielding the core between tests, then sleeps between
  tests, 20 us doubling to 10 ms, so a wait for a rank that is seconds late
  costs no core.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ._deadline import check as check_deadline

__all__ = ["PolledComm", "duplicate"]

_SPIN = 1.0  # seconds of testing in a loop, the core yielded between tests, before the first sleep
_NAP_FIRST = 20e-6
_NAP_MOST = 10e-3  # the longest sleep: bounds the reaction to a signal


def _wait(request: Any) -> None:
    """Until ``request`` completes, with signal handlers run between tests."""
    if request.Test():
        return
    start = time.monotonic()
    # As MPI's own blocking wait, test in a loop: a peer that comes a little
    # late costs no more than in MPI_Barrier. sleep(0) gives the core (and
    # the GIL) to whoever needs it between tests, as oversubscribed ranks do.
    while time.monotonic() - start < _SPIN:
        if request.Test():
            return
        time.sleep(0)  # Python runs pending signal handlers after it
        check_deadline()
    nap = _NAP_FIRST
    while not request.Test():
        time.sleep(nap)
        check_deadline()
        nap = min(nap * 2, _NAP_MOST)


class PolledComm:
    """An mpi4py communicator's ``Barrier`` and ``allgather`` (of bytes,
    what the core exchanges) as interruptible waits; everything else is the
    communicator's own (see the module docstring). ``mpi`` is its module,
    ``mpi4py.MPI``."""

    def __init__(self, comm: Any, mpi: Any) -> None:
        self.comm = comm
        self._mpi = mpi
        self._size = comm.Get_size()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.comm, name)

    def Barrier(self) -> None:
        """``comm.Barrier()``, interruptible."""
        _wait(self.comm.Ibarrier())

    barrier = Barrier

    def allgather(self, data: bytes) -> list[bytes]:
        """Every rank's ``data`` (bytes), in rank order, interruptible."""
        mpi = self._mpi
        mine = np.frombuffer(data, np.uint8)
        sizes = np.zeros(self._size, np.int64)
        _wait(self.comm.Iallgather([np.array([mine.size], np.int64), 1, mpi.INT64_T], [sizes, 1, mpi.INT64_T]))
        displs = np.zeros(self._size, np.int64)
        np.cumsum(sizes[:-1], out=displs[1:])
        whole = np.empty(int(sizes.sum()), np.uint8)
        # Counts are ints in MPI's C interface: a window's creation exchanges
        # a few hundred bytes per rank, far below 2 GiB.
        _wait(self.comm.Iallgatherv([mine, mine.size, mpi.BYTE], [whole, sizes, displs, mpi.BYTE]))
        return [whole[d : d + n].tobytes() for d, n in zip(displs.tolist(), sizes.tolist())]


def duplicate(comm: Any) -> Any:
    """``comm.Dup()``, interruptible (``Idup``, then the wait above): a window
    keeps a duplicate of an mpi4py communicator, and creating it is the
    window's first collective. On an interruption the new communicator is
    abandoned half made (MPI cannot cancel a collective)."""
    new, request = comm.Idup()
    _wait(request)
    return new
