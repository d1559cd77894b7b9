"""Notified RMA litmus tests on real ranks (issue 16).

Usage (from tests/test_notify.py): <launcher> -n N notify.py CHECK ROUNDS [WORDS]
  put      2 ranks, ping-pong: rank 1 puts M int64 = i and notifies; rank 0
           waits for count i, then every element must be i (a notification
           seen before its data fails here), and answers with a bare Notify.
  get      2 ranks: rank 0 fills its memory with i and says so; rank 1 gets
           it with Rget_notify; rank 0, once notified, at once overwrites it
           with -1. Rank 1's data must be all i (a notification sent before
           the read completed lets the overwrite in).
  acc      2 ranks: rank 1 Accumulate_notify(SUM) of ones; once rank 0 sees
           count i every element must be i.
  order    2 ranks, no handshake: rank 1 alternates Put_notify to counters
           0 and 1 (values k at slots 0 and 1). Rank 0 polls: whenever it
           sees counter 1 at c1, counter 0 must be >= c1 (per-pair order)
           and slot 1 >= c1 (data first).
  exact    N ranks: every rank but 0 runs 2 threads, each issuing ROUNDS
           notified ops to rank 0 (puts, accumulates, gets, bare Notify in
           turn); rank 0 waits for the total, then, after every origin has
           flushed, the count is still exactly that and counter 1 is 0.
  epochs   2 ranks: Put_notify inside a fence epoch and inside PSCW; the
           target sees the notification before its own Fence/Wait.
Where the window runs comes from the environment (tests/conftest.py);
nasty mode through ONESIDED_NASTY. Rank 0 prints "PASS CHECK rounds=R".
"""

from __future__ import annotations

import sys
import threading

import numpy as np

import harness
import onesided
from onesided import Window

comm = harness.comm()
rank, size = comm.Get_rank(), comm.Get_size()
check, rounds = sys.argv[1], int(sys.argv[2])
# int64 elements moved per round: by default 4 KiB, several stores; 1 MiB
# and more take the providers' large-message protocols, where a write
# completes long after the message that would announce it too early.
M = int(sys.argv[3]) if len(sys.argv) > 3 else 512


def window(n_counters: int = 2) -> Window:
    win = Window.Allocate(M * 8, 8, info=harness.info(onesided_notifications=str(n_counters)), comm=comm)
    harness.check_provider(win)
    assert win.notifications == n_counters
    return win


def litmus_put(win: Window) -> None:
    data = np.frombuffer(win, np.int64)
    src = np.empty(M, np.int64)
    for i in range(1, rounds + 1):
        if rank == 1:
            src[:] = i
            win.Put_notify(src, 0, notification_idx=0)
            win.Wait_notify(1, i)  # rank 0 has checked round i
        else:
            win.Wait_notify(0, i)
            if not (data == i).all():
                snap = data.copy()  # the put may still be landing: report what one look saw
                raise AssertionError(f"round {i}: notified before data: {int((snap != i).sum())} of {M} elements "
                                     f"stale, e.g. {snap[snap != i][:3]}")
            win.Notify(1, 1)


def litmus_get(win: Window) -> None:
    data = np.frombuffer(win, np.int64)
    dst = np.empty(M, np.int64)
    for i in range(1, rounds + 1):
        if rank == 0:
            data[:] = i
            win.Sync()
            win.Notify(1, 1)  # "round i is ready"
            win.Wait_notify(0, i)  # rank 1 has read it: reuse the memory at once
            data[:] = -1
        else:
            win.Wait_notify(1, i)
            win.Rget_notify(dst, 0, notification_idx=0).Wait()
            if not (dst == i).all():
                raise AssertionError(f"round {i}: target memory reused before the get read it: {dst[dst != i][:4]}")


def litmus_acc(win: Window) -> None:
    data = np.frombuffer(win, np.int64)
    ones = np.ones(M, np.int64)
    for i in range(1, rounds + 1):
        if rank == 1:
            win.Accumulate_notify(ones, 0, op=onesided.SUM, notification_idx=0)
            win.Wait_notify(1, i)
        else:
            win.Wait_notify(0, i)
            # An atomic read: the accumulates are atomic per element.
            seen = np.empty(M, np.int64)
            win.Get_accumulate(None, seen, 0, op=onesided.NO_OP)
            win.Flush(0)
            if not (seen == i).all():
                raise AssertionError(f"round {i}: notified before the accumulate was applied: {seen[seen != i][:4]}")
            win.Notify(1, 1)


def litmus_order(win: Window) -> None:
    data = np.frombuffer(win, np.int64)
    if rank == 1:
        v = np.empty(1, np.int64)
        for k in range(1, rounds + 1):
            v[0] = k
            win.Put_notify(v, 0, 0, notification_idx=0)
            win.Put_notify(v, 0, 1, notification_idx=1)
        win.Flush(0)
        return
    seen = 0
    while seen < rounds:
        c1 = win.Get_notify_value(1)
        c0 = win.Get_notify_value(0)
        slot1 = int(data[1])
        if c0 < c1:
            raise AssertionError(f"counter 1 at {c1} before counter 0 ({c0}): per-pair order broken")
        if slot1 < c1:
            raise AssertionError(f"counter 1 at {c1} but slot 1 holds {slot1}: notified before data")
        seen = c1
    assert win.Get_notify_value(0) == rounds


def exact(win: Window) -> None:
    per_thread = rounds
    total = 2 * per_thread * (size - 1)
    if rank != 0:
        def origin(t: int) -> None:
            one = np.ones(1, np.int64)
            got = np.empty(1, np.int64)
            for k in range(per_thread):
                kind = k % 4
                if kind == 0:
                    win.Put_notify(one, 0, M - 1 - t, notification_idx=0)
                elif kind == 1:
                    win.Accumulate_notify(one, 0, 0, notification_idx=0)
                elif kind == 2:
                    win.Rget_notify(got, 0, 1, notification_idx=0).Wait()
                else:
                    win.Notify(0, 0)
        threads = [threading.Thread(target=origin, args=(t,)) for t in range(2)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        win.Flush(0)
    else:
        win.Wait_notify(0, total)
    comm.Barrier()  # every origin has flushed: nothing more is coming
    if rank == 0:
        got = win.Get_notify_value(0)
        assert got == total, f"count {got}, expected exactly {total}"
        assert win.Get_notify_value(1) == 0, "counter 1 was never notified"
        assert int(np.frombuffer(win, np.int64)[0]) == (size - 1) * 2 * ((per_thread + 2) // 4), "accumulates lost"


def epochs(win: Window) -> None:
    data = np.frombuffer(win, np.int64)
    v = np.full(M, 7, np.int64)
    win.Fence()
    if rank == 1:
        win.Put_notify(v, 0, notification_idx=0)
    else:
        win.Wait_notify(0, 1)  # before this rank's Fence: progress delivered it
        assert (data == 7).all()
    win.Fence()
    group = win.Get_group()
    if rank == 1:
        win.Start(group.Incl([0]))
        v[:] = 9
        win.Put_notify(v, 0, notification_idx=1)
        win.Complete()
    else:
        win.Post(group.Incl([1]))
        win.Wait_notify(1, 1)  # before Wait
        assert (data == 9).all()
        win.Wait()
    group.Free()


def main() -> None:
    win = window()
    if check in ("put", "get", "acc", "order", "exact"):
        win.Lock_all()
        {"put": litmus_put, "get": litmus_get, "acc": litmus_acc, "order": litmus_order, "exact": exact}[check](win)
        win.Unlock_all()
    elif check == "epochs":
        epochs(win)
    else:
        raise SystemExit(f"unknown check {check}")
    comm.Barrier()
    win.Free()
    if rank == 0:
        print(f"PASS {check} rounds={rounds}", flush=True)


main()
