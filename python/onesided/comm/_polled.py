"""The collectives a window runs over an mpi4py communicator, interruptible.

A window's creation, ``Fence`` and ``Free`` need an allgather or a barrier
over the window's communicator, and creation first a duplicate of it.
mpi4py's ``Dup``, ``Barrier`` and ``allgather`` wait inside MPI and return
to Python only when every rank has joined: a rank waiting there for a peer
that never comes ignores Ctrl-C and ``SIGTERM``'s Python handler alike, and
a job under ``mpiexec`` whose ranks wait in ``Fence`` never ends (issue 25).
This module runs the same collectives as MPI's non-blocking ones
(``Idup``, ``Ibarrier``, ``Iallgather`` of fixed slots, then
``Iallgatherv`` of what did not fit) and waits for them in Python, so that the interpreter runs
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
* Latency: the first 200 us of a wait test in a loop keeping the core
  (what MPI's own blocking wait does), the rest of the first second tests
  yielding the core between tests, then the wait sleeps between tests, 20 us
  doubling to 10 ms, so a wait for a rank that is seconds late costs no core.
"""

from __future__ import annotations

import struct
import time
from typing import Any

from ._deadline import check as check_deadline

__all__ = ["PolledComm", "duplicate"]

_HOT = 200e-6  # seconds of testing in a loop, keeping the core, before yielding it between tests
_SPIN = 1.0  # seconds of testing in a loop, the core yielded between tests, before the first sleep
_NAP_FIRST = 20e-6
_NAP_MOST = 10e-3  # the longest sleep: bounds the reaction to a signal
# allgather's slot: the bytes per rank that one round carries. A window's
# creation exchanges 100-400 bytes per rank in each of its rounds; 1 KiB
# slots keep those to one round each, and cost 16 KiB per round on 16 ranks.
SLOT = 1024 - 8
_HEADER = 8  # the slot's length field, int64
_LENGTH = struct.Struct("<q")


def _wait(request: Any) -> None:
    """Until ``request`` completes, with signal handlers run between tests."""
    if request.Test():
        return
    start = time.monotonic()
    # First as MPI's own blocking wait: test in a loop, keeping the core. A
    # peer that comes within _HOT costs what it costs in MPI_Barrier (2 us
    # for a barrier of 2 ranks here); yielding between these tests made
    # every round cost a trip through the scheduler (70-120 us on a loaded
    # 2-core host), most of a window's creation. The interpreter still runs
    # signal handlers between tests (the loop's back edge checks for them).
    while time.monotonic() - start < _HOT:
        if request.Test():
            return
        check_deadline()
    # Then sleep(0) gives the core (and the GIL) to whoever needs it between
    # tests, as oversubscribed ranks do.
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
        """Every rank's ``data`` (bytes), in rank order, interruptible.

        One round where every rank's data fits a slot of SLOT bytes (a
        window's creation exchanges a few hundred bytes per rank): an
        Iallgather of fixed slots, each the length then the data. Only when
        some rank's data is longer (every rank sees it in the lengths) is
        the rest of it gathered in a second round, an Iallgatherv. Plain
        bytearrays and struct, not numpy: the core calls this twice per
        window, and numpy's per-call overheads were most of its time."""
        mpi = self._mpi
        n, width = self._size, _HEADER + SLOT
        # Each step one C call: a window's creation waits on this twice, and
        # the Python around one round cost more than the round (5 us against
        # 3.5 us for the Iallgather at 2 ranks).
        slot = (_LENGTH.pack(len(data)) + data[:SLOT]).ljust(width, b"\0")
        slots = bytearray(n * width)
        _wait(self.comm.Iallgather([slot, mpi.BYTE], [slots, mpi.BYTE]))
        whole = bytes(slots)
        sizes = [_LENGTH.unpack_from(whole, r * width)[0] for r in range(n)]
        heads = [whole[r * width + _HEADER : r * width + _HEADER + min(size, SLOT)] for r, size in enumerate(sizes)]
        if max(sizes) <= SLOT:
            return heads
        # Counts are ints in MPI's C interface: far below 2 GiB here.
        rest = [max(size - SLOT, 0) for size in sizes]
        displs = [sum(rest[:r]) for r in range(n)]
        tails = bytearray(sum(rest))
        tail = bytes(data[SLOT:])
        _wait(self.comm.Iallgatherv([tail, len(tail), mpi.BYTE], [tails, rest, displs, mpi.BYTE]))
        return [h + bytes(tails[d : d + e]) for h, d, e in zip(heads, displs, rest)]


def duplicate(comm: Any) -> Any:
    """``comm.Dup()``, interruptible (``Idup``, then the wait above): a window
    keeps a duplicate of an mpi4py communicator, and creating it is the
    window's first collective. On an interruption the new communicator is
    abandoned half made (MPI cannot cancel a collective).

    The wait comes before any other collective of the creation: running
    creation's exchanges over the caller's communicator while the ``Idup``
    went on behind them saved 13-16 us per window under MPICH, and broke
    Open MPI 5 (its ``Idup`` and a concurrent ``Iallgather`` on one
    communicator mismatch: ``MPI_ERR_TRUNCATE`` in libnbc, ompi#2025)."""
    new, request = comm.Idup()
    _wait(request)
    return new
