"""Rank programs for tests/test_request_atomics.py and tests/test_async.py:
request-based fetching atomics and awaited requests between real ranks.

Usage: request_atomics.py CHECK (the checks below)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

import numpy as np

import harness
import onesided
from onesided import Window

comm = harness.comm()
rank, size = comm.Get_rank(), comm.Get_size()
INFO = harness.info()


def check_tickets() -> None:
    """Every rank takes N tickets from rank 0's counter with Rfetch_and_op
    (SUM 1) and adds M to a second counter through Rcompare_and_swap retry
    loops. Each result is read right after its completion is reported (by
    Wait, a Test loop, or Waitall): the tickets of all ranks are exactly
    0 .. size*N-1, each once, and the second counter is exactly size*M."""
    n, m = 300, 60
    win = Window.Allocate(16, disp_unit=8, info=INFO, comm=comm)
    harness.check_provider(win)
    mem = np.frombuffer(win, np.int64)
    comm.Barrier()
    one = np.ones(1, np.int64)
    tickets: list[int] = []
    win.Lock_all()
    batch: list[tuple[onesided.Request, np.ndarray]] = []
    for i in range(n):
        res = np.full(1, -1, np.int64)
        r = win.Rfetch_and_op(one, res, 0, 0, onesided.SUM)
        if i % 3 == 0:
            r.Wait()
            assert res[0] >= 0, "Wait returned before the result was written"
            tickets.append(int(res[0]))
        elif i % 3 == 1:
            while not r.Test():
                pass
            assert res[0] >= 0, "Test returned True before the result was written"
            tickets.append(int(res[0]))
        else:
            batch.append((r, res))
    onesided.Request.Waitall([r for r, _ in batch])
    for _, res in batch:
        assert res[0] >= 0, "Waitall returned before a result was written"
        tickets.append(int(res[0]))
    for _ in range(m):
        guess = 0
        while True:
            res = np.full(1, -1, np.int64)
            r = win.Rcompare_and_swap(np.array([guess + 1], np.int64), np.array([guess], np.int64), res, 0, 1)
            r.Wait()
            assert res[0] >= 0, "Wait returned before the compare-and-swap result was written"
            if res[0] == guess:
                break
            guess = int(res[0])
    win.Unlock_all()
    everyone = sorted(t for ts in comm.allgather(tickets) for t in ts)
    assert everyone == list(range(size * n)), ("tickets not unique and exact", everyone[:20])
    comm.Barrier()
    if rank == 0:
        win.Sync()
        assert mem[0] == size * n and mem[1] == size * m, mem[:2]
    comm.Barrier()
    win.Free()


def check_overlap() -> None:
    """Rank 0 awaits an Rfetch_and_op on rank 1 while rank 1 is stopped
    (SIGSTOP), so the operation cannot complete until another coroutine of
    rank 0 resumes it (SIGCONT): the await completing at all proves the loop
    ran that coroutine while the await was pending (an await that blocked
    the loop would hang, and the job would time out), and the recorded order
    proves the completion came after it. Then the same with the awaiting
    task cancelled while pending: the loop's eventfd reader is removed, the
    operation still completes (Wait), and its result is exact. tcp only:
    stopping a process that shares a provider's shared-memory queue lock
    could leave the lock held."""
    win = Window.Allocate(16, disp_unit=8, info=INFO, comm=comm)
    harness.check_provider(win)
    pids = comm.allgather(os.getpid())
    comm.Barrier()
    if rank == 0:
        from onesided import _core
        from onesided.window import _aio

        one = np.ones(1, np.int64)
        win.Lock_all()

        async def overlap() -> None:
            order: list[str] = []
            awaiting = asyncio.Event()
            harness.stop(pids[1])
            res = np.full(1, -1, np.int64)
            r = win.Rfetch_and_op(one, res, 1, 0)

            async def fetch() -> None:
                awaiting.set()
                assert await r is True
                order.append("completed")
                assert res[0] == 0, res

            async def resume() -> None:
                await awaiting.wait()
                order.append("other coroutine ran")
                os.kill(pids[1], signal.SIGCONT)

            await asyncio.gather(fetch(), resume())
            assert order == ["other coroutine ran", "completed"], order
            assert not _aio._readers, "a reader left registered"

        async def cancelled() -> None:
            loop = asyncio.get_running_loop()
            harness.stop(pids[1])
            res = np.full(1, -1, np.int64)
            r = win.Rfetch_and_op(one, res, 1, 0)
            registered = asyncio.Event()

            async def fetch() -> None:
                registered.set()
                await r

            task = asyncio.create_task(fetch())
            await registered.wait()  # task is now suspended in `await r`
            assert _aio._readers[loop].waiting, "the pending await registered nothing"
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
            else:
                raise AssertionError("the await completed while the target was stopped")
            assert not _aio._readers, "the cancelled await left its reader"
            assert loop.remove_reader(_core._ready_fd()) is False, "the eventfd is still watched"
            assert res[0] == -1 and bool(r), "the request completed while the target was stopped"
            os.kill(pids[1], signal.SIGCONT)
            assert r.Wait() is True and res[0] == 1, res

        asyncio.run(overlap())
        asyncio.run(cancelled())
        win.Unlock_all()
    comm.Barrier()
    if rank == 1:
        win.Sync()
        assert np.frombuffer(win, np.int64)[0] == 2
    comm.Barrier()
    win.Free()


def check_failed() -> None:
    """An awaited request whose operation fails raises the onesided error
    that Wait would: rank 1 detaches a region that rank 0 still has in its
    view of the dynamic window (an origin learns of a detach only at its
    next epoch start), so the atomic fails at the target."""
    win = Window.Create_dynamic(info=INFO, comm=comm)
    a = np.zeros(4, np.int64)
    if rank == 1:
        win.Attach(a)
    addr = comm.bcast(onesided.Get_address(a) if rank == 1 else 0, root=1)
    comm.Barrier()
    if rank == 0:
        win.Lock(1)
        res = np.zeros(1, np.int64)
        win.Fetch_and_op(np.ones(1, np.int64), res, 1, addr)
        win.Flush(1)
    comm.Barrier()
    if rank == 1:
        win.Detach(a)
    comm.Barrier()
    if rank == 0:

        async def main() -> None:
            r = win.Rfetch_and_op(np.ones(1, np.int64), res, 1, addr)
            try:
                await r
            except onesided.Error as e:
                print(f"RAISED {type(e).__name__}: {e}")
            else:
                raise AssertionError("await of a failed request returned")

        asyncio.run(main())
        try:
            win.Unlock(1)
        except onesided.Error:
            pass  # the failure may be reported again at the completion point
    comm.Barrier()
    win.Free()


CHECKS = {"tickets": check_tickets, "overlap": check_overlap, "failed": check_failed}

if __name__ == "__main__":
    name = sys.argv[1]
    CHECKS[name]()
    comm.Barrier()
    if rank == 0:
        print(f"PASS {name}")
