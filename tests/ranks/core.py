"""Core RMA properties, each a check that a wrong implementation fails.

Usage (from tests/test_core.py): <launcher> -n N core.py CHECK
Every rank asserts; rank 0 prints "PASS CHECK" at the end.
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
INFO = harness.info()


def expect_error(cls: type[BaseException], fn, *args, **kwargs) -> str:
    try:
        fn(*args, **kwargs)
    except cls as e:
        return str(e)
    raise AssertionError(f"{fn.__name__}{args} did not raise {cls.__name__}")


def check_counter() -> None:
    """N ranks fetch-and-add 1 on one counter: the fetched values are exactly
    0..total-1 (no duplicate, no gap) and the final value is exact."""
    win = Window.Allocate(8, disp_unit=8, info=INFO, comm=comm)
    harness.check_provider(win)
    per_rank = 300
    one, got = np.ones(1, np.int64), np.zeros(1, np.int64)
    tickets = []
    with win.lock_all():
        for _ in range(per_rank):
            win.Fetch_and_op(one, got, 0, 0, onesided.SUM)
            win.Flush(0)
            tickets.append(int(got[0]))
    everything = sorted(t for ts in comm.allgather(tickets) for t in ts)
    assert everything == list(range(per_rank * size)), "duplicate or missing tickets"
    comm.Barrier()
    if rank == 0:
        win.Sync()
        assert np.frombuffer(win, np.int64)[0] == per_rank * size
    win.Free()


def check_cas() -> None:
    """Compare_and_swap contention: exactly one winner per round; and CAS
    increments mixed with fetch-and-add on one counter (different ops, still
    atomic with each other) total exactly."""
    rounds = 60
    win = Window.Allocate(8 * (rounds + 1), disp_unit=8, info=INFO, comm=comm)
    mine, zero, old = np.array([rank + 1], np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64)
    won = []
    with win.lock_all():
        for r in range(rounds):
            win.Compare_and_swap(mine, zero, old, 0, r)
            win.Flush(0)
            won.append(old[0] == 0)
            assert old[0] in range(0, size + 1)
        # Mixed increments: even ranks CAS-loop, odd ranks fetch-and-add.
        for _ in range(100):
            if rank % 2 == 0:
                cur = np.zeros(1, np.int64)
                win.Fetch_and_op(None, cur, 0, rounds, onesided.NO_OP)
                win.Flush(0)
                while True:
                    new = cur + 1
                    win.Compare_and_swap(new, cur, old, 0, rounds)
                    win.Flush(0)
                    if old[0] == cur[0]:
                        break
                    cur[0] = old[0]
            else:
                win.Fetch_and_op(np.ones(1, np.int64), old, 0, rounds, onesided.SUM)
                win.Flush(0)
    winners = np.sum(comm.allgather(won), axis=0)
    assert (winners == 1).all(), f"rounds without exactly one winner: {winners}"
    comm.Barrier()
    if rank == 0:
        win.Sync()
        slots = np.frombuffer(win, np.int64)
        assert (slots[:rounds] >= 1).all()
        assert slots[rounds] == 100 * size, slots[rounds]
    win.Free()


def _reference(op: onesided.Op, old: np.ndarray, x: np.ndarray) -> np.ndarray:
    ref = {
        onesided.SUM: lambda: old + x,
        onesided.PROD: lambda: old * x,
        onesided.MAX: lambda: np.maximum(old, x),
        onesided.MIN: lambda: np.minimum(old, x),
        onesided.BAND: lambda: old & x,
        onesided.BOR: lambda: old | x,
        onesided.BXOR: lambda: old ^ x,
        onesided.LAND: lambda: np.logical_and(old, x),
        onesided.LOR: lambda: np.logical_or(old, x),
        onesided.LXOR: lambda: np.logical_xor(old, x),
        onesided.REPLACE: lambda: x,
        onesided.NO_OP: lambda: old,
    }[op]
    with np.errstate(over="ignore"):
        return ref().astype(old.dtype)


def _values(dt: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    if dt.kind == "b":
        return np.array([1, 0, 1, 0], dt), np.array([1, 1, 0, 0], dt)
    if dt.kind == "u":
        return np.array([3, 250, 7, 0], np.uint64).astype(dt), np.array([5, 9, 0, 12], np.uint64).astype(dt)
    if dt.kind == "i":
        return np.array([3, -100, 7, 0], dt), np.array([5, 90, -1, 12], dt)
    if dt.kind == "f":
        return np.array([1.5, -2.0, 3.25, 0.0], dt), np.array([0.5, 4.0, -1.0, 2.0], dt)
    return np.array([1 + 2j, -1j, 3, 0], dt), np.array([2 - 1j, 1j, 0.5, 1], dt)


ALL_DTYPES = [np.dtype(n) for n in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                   "uint64", "float32", "float64", "longdouble", "complex64", "complex128",
                                   "clongdouble")]
ACC_OPS = [onesided.SUM, onesided.PROD, onesided.MAX, onesided.MIN, onesided.BAND, onesided.BOR, onesided.BXOR,
           onesided.LAND, onesided.LOR, onesided.LXOR, onesided.REPLACE, onesided.NO_OP]


def _meaningful(op: onesided.Op, dt: np.dtype) -> bool:
    """MPI's rules: bitwise ops on integers, logical ops on integers and bool,
    MAX/MIN on real numbers, arithmetic on numbers, REPLACE/NO_OP on all."""
    if op in (onesided.BAND, onesided.BOR, onesided.BXOR):
        return dt.kind in "iu"
    if op in (onesided.LAND, onesided.LOR, onesided.LXOR):
        return dt.kind in "iub"
    if op in (onesided.MAX, onesided.MIN):
        return dt.kind in "iuf"
    if op in (onesided.SUM, onesided.PROD):
        return dt.kind in "iufc"
    return True


def check_get_accumulate() -> None:
    """Every op x every dtype: Get_accumulate returns the old values and
    leaves op(old, x); ops with no meaning for the dtype raise UnsupportedError."""
    target = (rank + 1) % size
    win = Window.Allocate(256, disp_unit=1, info=INFO, comm=comm)
    tested = 0
    with win.lock(target):
        for dt in ALL_DTYPES:
            old, x = _values(dt)
            for op in ACC_OPS:
                result = np.zeros_like(old)
                win.Put(old, target)
                win.Flush(target)
                try:
                    win.Get_accumulate(x, result, target, op=op)
                except onesided.UnsupportedError:
                    assert not _meaningful(op, dt), (op, dt)
                    continue
                assert _meaningful(op, dt), (op, dt)
                win.Flush(target)
                after = np.zeros_like(old)
                win.Get(after, target)
                win.Flush(target)
                assert np.array_equal(result, old), (dt, op, result, old)
                assert np.array_equal(after, _reference(op, old, x)), (dt, op, after, _reference(op, old, x))
                tested += 1
            # Compare_and_swap on every dtype: swaps on equality only.
            res, res2 = np.zeros(1, dt), np.zeros(1, dt)
            win.Put(old, target)
            win.Flush(target)  # Put is unordered with atomics
            win.Compare_and_swap(x[:1], old[:1], res, target, 0)  # equal: swaps
            win.Compare_and_swap(x[1:2], x[1:2], res2, target, dt.itemsize)  # x[1] != old[1]: keeps
            win.Flush(target)
            after = np.zeros_like(old)
            win.Get(after, target)
            win.Flush(target)
            assert after[0] == x[0] and after[1] == old[1], (dt, after)
            assert res[0] == old[0] and res2[0] == old[1], (dt, res, res2)
    assert tested == sum(_meaningful(op, dt) for dt in ALL_DTYPES for op in ACC_OPS), tested
    comm.Barrier()
    win.Free()


def check_putget() -> None:
    """Put/Get round trips for every dtype, counts 0..5, the target given in
    each form; sentinels around the target region stay unchanged."""
    target = (rank + 1) % size
    source = (rank - 1) % size
    for dt in ALL_DTYPES:
        n = 16
        mem = np.zeros(n, dt)
        sentinel = np.ones(n, dt) if dt.kind == "b" else np.arange(100, 100 + n).astype(dt)
        mem[:] = sentinel
        win = Window.Create(mem, disp_unit=dt.itemsize, info=INFO, comm=comm)
        forms = []
        win.Fence()
        for count in range(6):
            disp = 2 * count
            data = (np.zeros(count, dt) if dt.kind == "b" else (np.arange(count) + 1000 * (rank + 1)).astype(dt))
            form = [disp, (disp,), (disp, count), (disp, count, dt), None][count % 5]
            if form is None:
                disp = 0
            forms.append((disp, count))
            win.Put(data, target, form)
        win.Fence()
        # The source's puts, reconstructed here, are all that changed.
        expected = sentinel.copy()
        for count in range(6):
            disp = 0 if count % 5 == 4 else 2 * count
            if count:
                expected[disp:disp + count] = (np.zeros(count, dt) if dt.kind == "b"
                                               else (np.arange(count) + 1000 * (source + 1)).astype(dt))
        assert np.array_equal(mem, expected), (dt, mem, expected)
        back = np.zeros(n, dt)
        win.Get(back, target)
        win.Get((back, 3), target, (5, 3, dt))
        win.Fence(onesided.MODE_NOSUCCEED)
        theirs = expected.copy() if source == target else None
        if theirs is not None:
            assert np.array_equal(back, theirs)
        win.Free()


def check_lock_contention(flavor: str = "allocate") -> None:
    """Ranks take turns under an exclusive lock doing non-atomic
    get-modify-put of a whole block at rank 0: only mutual exclusion keeps
    every slot exact. A shared-lock reader never sees a half-written block.
    `flavor` create: the same over user memory (on one host with shm, its
    lock lives in shared memory too, the puts go by cross-memory attach)."""
    block = 32
    if flavor == "create":
        mem = np.zeros(block, np.int64)
        win = Window.Create(mem, disp_unit=8, info=INFO, comm=comm)
    else:
        win = Window.Allocate(8 * block, disp_unit=8, info=INFO, comm=comm)
    rounds = 40
    buf = np.zeros(block, np.int64)
    for r in range(rounds):
        if rank % 2 == 1 and r % 4 == 0:
            with win.lock(0, shared=True):
                win.Get(buf, 0)
            assert (buf == buf[0]).all(), "torn block under a shared lock"
        with win.lock(0):
            win.Get(buf, 0)
            win.Flush(0)
            buf += rank + 1
            win.Put(buf, 0)
    comm.Barrier()
    if rank == 0:
        win.Sync()
        want = rounds * sum(r + 1 for r in range(size))
        got = np.frombuffer(win, np.int64)
        assert (got == want).all(), (got, want)
    win.Free()


def check_test_after_complete() -> None:
    """Once a barrier that follows the origin's Complete has passed, the
    target's Test must say the exposure epoch ended (mpi4py's
    testStartCompletePostTest relies on it). The Complete message may be
    being dispatched by the progress thread at that moment: a Test that
    skipped its progress round then answered no, and the ranks' epochs fell
    out of step. Rank 0 is the origin, rank 1 the target."""
    mem = np.zeros(100, np.int64)
    win = Window.Create(mem, disp_unit=8, info=INFO, comm=comm)
    group = win.Get_group()
    peers = group.Excl([rank])
    false_tests = 0
    for _ in range(2000):
        if rank == 0:
            win.Start(peers)
            comm.Barrier()
            win.Complete()
            comm.Barrier()
        else:
            win.Post(peers)
            comm.Barrier()
            comm.Barrier()
            if not win.Test():
                false_tests += 1
                win.Wait()
    assert false_tests == 0, f"Test said no {false_tests} times after the origin's Complete"
    peers.Free()
    group.Free()
    win.Free()


def check_lock_wait_releases_gil() -> None:
    """A Lock that must wait gives up the GIL while it waits (the uncontended
    one keeps it): rank 1 holds rank 0's lock until a thread of rank 0 tells
    it, through a second window, to let go. That thread runs only while
    rank 0's main thread waits in Lock; a Lock holding the GIL never
    returns, and the launcher's timeout fails the test."""
    win = Window.Allocate(8, disp_unit=8, info=INFO, comm=comm)
    bell = Window.Allocate(8, disp_unit=8, info=INFO, comm=comm)
    rung = np.frombuffer(bell, np.int64)
    if rank == 1:
        win.Lock(0)
    comm.Barrier()
    if rank == 1:
        bell.Lock(1, onesided.LOCK_SHARED)  # shared: the helper's put gets in
        while rung[0] == 0:
            bell.Sync()
        bell.Unlock(1)
        win.Unlock(0)
    elif rank == 0:
        waiting = threading.Event()

        def ring() -> None:
            waiting.wait()
            with bell.lock(1, shared=True):
                bell.Put(np.ones(1, np.int64), 1)

        helper = threading.Thread(target=ring)
        helper.start()
        waiting.set()  # the helper needs the GIL to act on it: Lock must give it up
        win.Lock(0)
        win.Unlock(0)
        helper.join(timeout=60)
        assert not helper.is_alive()
    comm.Barrier()
    bell.Free()
    win.Free()


def check_flush_visibility() -> None:
    """Flush means remote completion: after rank 1's Put and Flush, rank 2,
    told only through a barrier, reads the new value from rank 0."""
    assert size >= 3
    win = Window.Allocate(8, disp_unit=8, info=INFO, comm=comm)
    val = np.zeros(1, np.int64)
    win.Lock_all()
    for k in range(1, 41):
        if rank == 1:
            val[0] = k
            win.Put(val, 0)
            win.Flush(0)
        comm.Barrier()
        if rank == 2:
            win.Get(val, 0)
            win.Flush(0)
            assert val[0] == k, (val[0], k)
        comm.Barrier()
    win.Unlock_all()
    win.Free()


def check_passive_progress(mode: str) -> None:
    """A passive target that makes no onesided call, busy in a pure-Python
    loop (holding the GIL) or asleep in a blocking recv, lets another rank's
    Lock, 200 Fetch_and_ops with Flush each, a Put and Unlock complete. What
    ends the target's wait is the origin's completion itself, never a clock:
    busy, it spins on its own memory until the origin's Put (after those 200
    completed operations) lands; asleep, it blocks in recv on a socket the
    origin writes to only after Unlock returned. A target that made progress
    only in its own calls would never leave its wait, and the job would be
    killed at run_ranks's timeout: a hang, not a slow run, fails this."""
    import socket

    rounds = 200
    win = Window.Allocate(16, disp_unit=8, info=INFO, comm=comm)
    mem = np.frombuffer(win.tomemory(), np.int64)
    listener = socket.create_server(("127.0.0.1", 0)) if rank == 1 else None
    port = comm.allgather(listener.getsockname()[1] if listener else 0)[1]
    comm.Barrier()
    if rank == 1:
        assert listener is not None
        if mode == "sleep":
            # No onesided call and no wake-up until the origin is done: the
            # thread sleeps in the kernel, the progress thread answers alone.
            conn, _ = listener.accept()
            with conn:
                assert conn.recv(1) == b"1"
            win.Sync()  # the origin's stores, learnt of through the socket
        else:
            # No onesided call until the origin's Put lands: only loads of
            # this rank's own window memory (the unified model), GIL held.
            while mem[1] == 0:
                pass
        # The signal came after every Fetch_and_op had completed here.
        assert mem[0] == rounds, f"signal seen with the counter at {mem[0]}, not {rounds}"
        assert mem[1] == 1, mem
        listener.close()
    elif rank == 0:
        one, got = np.ones(1, np.int64), np.zeros(1, np.int64)
        win.Lock(1)
        for i in range(rounds):
            win.Fetch_and_op(one, got, 1, 0)
            win.Flush(1)
            assert got[0] == i
        win.Put(np.ones(1, np.int64), 1, 1)
        win.Unlock(1)
        if mode == "sleep":
            with socket.create_connection(("127.0.0.1", port)) as conn:
                conn.sendall(b"1")
    comm.Barrier()
    win.Free()


def check_bounds() -> None:
    """Out-of-window targets raise BoundsError at the origin; nothing lands
    outside a Create window made over a slice."""
    big = np.full(40, -7, np.int32)
    win = Window.Create(big[10:20], disp_unit=4, info=INFO, comm=comm)
    target = (rank + 1) % size
    v2, r2 = np.array([1, 2], np.int32), np.zeros(2, np.int32)
    win.Lock_all()
    for disp in (9, 10, -1, -(1 << 40), 1 << 60, (1 << 63) - 1):
        expect_error(onesided.BoundsError, win.Put, v2, target, disp)
        expect_error(onesided.BoundsError, win.Get, r2, target, disp)
        expect_error(onesided.BoundsError, win.Accumulate, v2, target, disp)
        expect_error(onesided.BoundsError, win.Get_accumulate, v2, r2, target, disp)
        # One element each (more is an ArgumentError, as in mpi4py).
        expect_error(onesided.BoundsError, win.Fetch_and_op, v2[:1], r2[:1], target, disp + 1 if disp == 9 else disp)
        expect_error(onesided.BoundsError, win.Compare_and_swap, v2[:1], v2[:1], r2[:1], target,
                     disp + 1 if disp == 9 else disp)
    msg = expect_error(onesided.BoundsError, win.Put, np.zeros(11, np.int32), target)
    assert f"rank {target}" in msg and "40-byte" in msg, msg
    win.Put(v2, target, 8)  # the last two elements: legal
    win.Accumulate(np.array([5], np.int32), target, 0)
    expect_error(onesided.ArgumentError, win.Put, v2, size + 3)
    win.Unlock_all()
    comm.Barrier()
    assert (big[:10] == -7).all() and (big[20:] == -7).all(), big
    assert list(big[18:20]) == [1, 2] and big[10] == -2, big
    win.Free()


def check_split() -> None:
    """Windows over a Split communicator: each half counts on its own."""
    sub = comm.Split(rank % 2, rank)
    win = Window.Allocate(8, disp_unit=8, info=INFO, comm=sub)
    assert win.group_size == sub.Get_size() and win.group_rank == sub.Get_rank()
    with win.lock_all():
        for _ in range(50):
            win.Accumulate(np.ones(1, np.int64), 0)
    comm.Barrier()
    if sub.Get_rank() == 0:
        win.Sync()
        assert np.frombuffer(win, np.int64)[0] == 50 * sub.Get_size()
    win.Free()
    sub.Free()


def check_threads() -> None:
    """Several Python threads per rank share one window: every fetched ticket
    is unique across all threads of all ranks."""
    import threading

    win = Window.Allocate(8, disp_unit=8, info=INFO, comm=comm)
    mine: list[int] = []

    def worker() -> None:
        got, one = np.zeros(1, np.int64), np.ones(1, np.int64)
        out = []
        for _ in range(150):
            win.Fetch_and_op(one, got, 0)
            win.Flush(0)
            out.append(int(got[0]))
        mine.extend(out)

    win.Lock_all()
    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    win.Unlock_all()
    everything = sorted(t for ts in comm.allgather(mine) for t in ts)
    assert everything == list(range(450 * size)), "duplicate or missing tickets"
    win.Free()


CHECKS = {
    "threads": check_threads,
    "counter": check_counter,
    "cas": check_cas,
    "get_accumulate": check_get_accumulate,
    "putget": check_putget,
    "lock_contention": check_lock_contention,
    "lock_contention_create": lambda: check_lock_contention("create"),
    "lock_wait_gil": check_lock_wait_releases_gil,
    "flush_visibility": check_flush_visibility,
    "passive_sleep": lambda: check_passive_progress("sleep"),
    "passive_busy": lambda: check_passive_progress("busy"),
    "bounds": check_bounds,
    "test_after_complete": check_test_after_complete,
    "split": check_split,
}

if __name__ == "__main__":
    name = sys.argv[1]
    CHECKS[name]()
    comm.Barrier()
    if rank == 0:
        print(f"PASS {name}")
