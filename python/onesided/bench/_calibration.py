"""The calibration line that opens every table: a core-to-core ping-pong
between ranks 0 and 1, measured just before the table's figures.

Neither library takes part: the two ranks map one page of a file both open
(page-cache pages: the same physical memory) and bounce a counter through
two cache lines, each rank spinning in Python on the other's line. The
round trip is two cache-line transfers between the cores plus the Python
loop around them, the same interpreter cost every figure carries; a run
whose calibration is far above its usual value was taken while the machine
was busy or the ranks shared a core, and its figures say little.
"""

from __future__ import annotations

import mmap
import os
import tempfile
import time
from typing import Any

from ._common import Settings, Spread, idle_barrier

# The two flags sit on separate cache lines (64-byte lines: 8 int64 apart).
PING, PONG = 0, 16
ROUND_TRIPS = 2000
BUDGET = 0.02  # seconds: the most one repetition takes


def pingpong(comm: Any, MPI: Any, s: Settings) -> Spread | None:
    """Microseconds per round trip between ranks 0 and 1, min, median and
    max over ``s.reps`` repetitions of up to ROUND_TRIPS (rank 0's result; None
    elsewhere, and on a job of one rank). Collective; ranks past 1 nap in a
    barrier meanwhile."""
    if comm.size < 2:
        return None
    pair = comm.Split(0 if comm.rank < 2 else MPI.UNDEFINED, comm.rank)
    name = None
    if comm.rank == 0:
        fd, name = tempfile.mkstemp(prefix="onesided-calibration-")
        os.ftruncate(fd, mmap.PAGESIZE)
        os.close(fd)
    name = comm.bcast(name, root=0)
    samples: list[float] = []
    if comm.rank < 2:
        with open(name, "r+b") as f:
            page = mmap.mmap(f.fileno(), mmap.PAGESIZE)
        pair.Barrier()
        if comm.rank == 0:
            os.unlink(name)  # both ranks have it mapped: nothing is left behind
        flags = memoryview(page).cast("q")
        try:
            for rep in range(s.reps + 1):  # the first is a warm-up
                pair.Barrier()
                t = _bounce(flags, comm.rank, rep * ROUND_TRIPS, ROUND_TRIPS, -1 - rep)
                if rep and comm.rank == 0:
                    samples.append(t * 1e6)
        finally:
            flags.release()
            page.close()
            pair.Free()
    idle_barrier(comm)
    return Spread.of(samples) if comm.rank == 0 else None


def _bounce(flags: memoryview, rank: int, start: int, n: int, stop: int) -> float:
    """Rank 0 writes PING and waits for the same value in PONG; rank 1 answers,
    until rank 0 writes ``stop`` (its own value for each repetition: rank 1
    may still read the last repetition's while rank 0 starts this one). Rank 0 stops after ``n`` round trips or
    BUDGET seconds, whichever comes first (on a busy machine one round trip
    can take milliseconds), and returns seconds per round trip; rank 1
    returns 0."""
    if rank == 0:
        clock = time.perf_counter
        t0 = clock()
        deadline = t0 + BUDGET
        done = 0
        for i in range(start + 1, start + n + 1):
            flags[PING] = i
            while flags[PONG] != i:
                pass
            done += 1
            if not done & 63 and clock() > deadline:
                break
        elapsed = clock() - t0
        flags[PING] = stop
        return elapsed / done
    i = start + 1
    while True:
        v = flags[PING]
        if v == i:
            flags[PONG] = i
            i += 1
        elif v == stop:
            return 0.0


def calibration_line(value: Spread | None) -> str:
    """The line printed at the head of a table."""
    if value is None:
        return "calibration: none (one rank: no core-to-core ping-pong)"
    return (f"calibration: core-to-core ping-pong between ranks 0 and 1 (a counter bounced through shared memory "
            f"by two Python loops, no MPI), {value:.3g} us [{value.lo:.3g}, {value.hi:.3g}] per round trip: median "
            "[min, max] of the repetitions, measured just before this table")


def with_calibration(text: str, value: Spread | None) -> str:
    """A table's text (``### title`` first) with the calibration line right
    under its heading."""
    head, _, rest = text.partition("\n")
    return f"{head}\n\n{calibration_line(value)}\n{rest}"
