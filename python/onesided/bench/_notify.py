"""Figure 3c: notified put (issue 16) beside the protocol it replaces.

A ping-pong between ranks 0 and 1: each round, rank 0 sends SIZE bytes to
rank 1, rank 1 learns that they arrived and sends SIZE bytes back the same
way, and rank 0 learns that. Half a round is the latency of "data put +
the target knows", the figure:

* ``notified put``: ``win.Put_notify(data, peer, notification_idx=0)``; the
  receiver waits in ``win.Wait_notify(0, round)``;
* ``put + flush + flag``: ``win.Put(data)``, ``win.Flush(peer)``, then a put
  of the round number into a flag word and ``win.Flush(peer)``; the receiver
  polls its flag word with ``win.Sync()`` between loads: the protocol MPI
  programs use today;
* ``MPI.Win put + flush + flag``: the same protocol on mpi4py's
  ``MPI.Win.Allocate``, the receiver polling with ``Win_sync`` and
  ``Iprobe`` (which drives MPI's progress, which the sender's Flush needs).

After the rounds each receiver checks the last data it got, so the figure
measures transfers that happened. Ratios: notified / the other (below 1:
notified is faster).
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from ._common import Progress, Settings, Spread, fmt_ratio, fmt_us, heading, table
from ._figures import FAST, SHM

SIZES = (8, 4096)
FLAG = 0  # int64 element of the flag word; data starts at element 1


def _rounds(win: Any, rank: int, data: np.ndarray, iters: int, send: Callable[[int, int], None],
            arrived: Callable[[int], None]) -> float:
    """Seconds for `iters` ping-pong rounds (rank 0's clock)."""
    peer = 1 - rank
    t0 = time.perf_counter()
    for i in range(1, iters + 1):
        if rank == 0:
            send(peer, i)
            arrived(i)
        else:
            arrived(i)
            send(peer, i)
    return time.perf_counter() - t0


def _notified(win: Any, data: np.ndarray) -> tuple[Callable[[int, int], None], Callable[[int], None]]:
    def send(peer: int, i: int) -> None:
        data[0] = i
        win.Put_notify(data, peer, 1, notification_idx=0)

    return send, lambda i: win.Wait_notify(0, i)


def _flagged(win: Any, data: np.ndarray, words: np.ndarray,
             poll: Callable[[], Any] | None = None) -> tuple[Callable[[int, int], None], Callable[[int], None]]:
    flag = np.zeros(1, np.int64)
    poll = poll or win.Sync

    def send(peer: int, i: int) -> None:
        data[0] = i
        win.Put(data, peer, 1)
        win.Flush(peer)
        flag[0] = i
        win.Put(flag, peer, FLAG)
        win.Flush(peer)

    def arrived(i: int) -> None:
        while words[FLAG] < i:
            poll()
        win.Sync()

    return send, arrived


def notified_put(comm: Any, MPI: Any, onesided: Any, s: Settings, progress: Progress) -> dict[str, Any] | None:
    """us per half round, by path and size, for each protocol (rank 0's result)."""
    paths = {"shared-memory path": FAST} if s.quick else {"shared-memory path": FAST, "libfabric shm": SHM}
    out: dict[tuple[str, int], dict[str, float]] = {}
    rank = comm.rank
    for path, info in paths.items():
        for size in SIZES:
            progress(f"notified put: {path}, {size} B")
            nbytes = 8 + max(size, 8)
            ours = onesided.Window.Allocate(nbytes, 8, info={**info, "onesided_notifications": "1"}, comm=comm)
            theirs = MPI.Win.Allocate(nbytes, 8, comm=comm)
            data = np.zeros(max(size, 8) // 8, np.int64)
            ours_words = np.frombuffer(ours, np.int64)
            theirs_words = np.frombuffer(theirs.tomemory(), np.int64)
            entries: list[tuple[str, Any, Any]] = [
                ("notified put", ours, lambda: _notified(ours, data)),
                ("put + flush + flag", ours, lambda: _flagged(ours, data, ours_words)),
                # MPI_Win_sync alone does not drive MPICH's progress, which
                # the sender's Flush needs from this side: Iprobe does.
                ("MPI.Win put + flush + flag", theirs,
                 lambda: _flagged(theirs, data, theirs_words, lambda: (theirs.Sync(), comm.Iprobe()))),
            ]
            iters = max(50, s.iters // (4 if info is FAST else 10))
            samples: dict[str, list[float]] = {key: [] for key, _, _ in entries}
            done = {key: 0 for key, _, _ in entries}  # rounds so far: counters and flags only grow
            for _ in range(s.reps):
                for key, win, make in entries:
                    send, arrived = make()
                    base = done[key]
                    win.Lock_all()
                    comm.Barrier()
                    t = _rounds(win, rank, data, iters, lambda p, i: send(p, base + i), lambda i: arrived(base + i))
                    win.Unlock_all()
                    comm.Barrier()
                    done[key] += iters
                    samples[key].append(t / iters / 2 * 1e6)
            # The last data each rank received is the last round's (the
            # flag protocol ran last on each window).
            for win, words, key in ((ours, ours_words, "put + flush + flag"),
                                    (theirs, theirs_words, "MPI.Win put + flush + flag")):
                win.Lock(rank)
                win.Sync()
                assert words[1] == done[key], f"notified put figure: {key} moved no data ({words[1]})"
                win.Unlock(rank)
            assert ours.Get_notify_value(0) == done["notified put"], "notified put figure: notifications lost"
            if rank == 0:
                out[(path, size)] = {k: Spread.of(v) for k, v in samples.items()}
            ours.Free()
            theirs.Free()
    return {"rows": out} if rank == 0 else None


def notified_put_text(res: dict[str, Any], s: Settings, peer: str = "MPI.Win") -> str:
    rows = []
    for (path, size), f in res["rows"].items():
        rows.append([f"{path}, {size} B", fmt_us(f["notified put"]), fmt_us(f["put + flush + flag"]),
                     fmt_us(f["MPI.Win put + flush + flag"]),
                     fmt_ratio(f["notified put"], f["put + flush + flag"]),
                     fmt_ratio(f["notified put"], f["MPI.Win put + flush + flag"])])
    head = heading(
        "3c. Notified put: data to a neighbour and the neighbour knows it arrived",
        f"us per half ping-pong round (put + the target seeing it): median [min, max] of {s.reps} repetitions. "
        "notified put: `win.Put_notify` and `win.Wait_notify` at the target; put + flush + flag: Put, Flush, "
        "a put of a flag word, Flush, the target polling the flag with Sync; MPI.Win: the same flag protocol on "
        f"mpi4py's `MPI.Win.Allocate` ({peer}). Ratios: notified / the other (below 1: notified is faster).",
    )
    return head + "\n" + table(["window, size", "notified put", "put + flush + flag", "MPI.Win flag",
                                "notified/flag", "notified/MPI.Win"], rows)
