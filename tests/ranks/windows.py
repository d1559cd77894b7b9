"""Window flavours and synchronisation added by issue 4, on real ranks: shared
and dynamic windows, active target (PSCW), request-based ops, and epoch
misuse.

Usage (from tests/test_windows.py): <launcher> -n N windows.py CHECK [MODE]
Every rank asserts; rank 0 prints "PASS CHECK" at the end. Nasty mode, when
the driver sets ONESIDED_NASTY, holds every op until its completion point;
every check here is correctly synchronised and must pass either way.
"""

from __future__ import annotations

import os
import sys

import numpy as np

import harness
import onesided
from onesided import Window

comm = harness.comm()
rank, size = comm.Get_rank(), comm.Get_size()
INFO = harness.info()
MPI_COMM = os.environ.get("ONESIDED_TEST_COMM") == "mpi"


def expect_error(cls: type[BaseException], fn, *args, match: str | None = None, **kwargs) -> str:
    try:
        fn(*args, **kwargs)
    except cls as e:
        if match is not None:
            assert match in str(e), f"{fn.__name__}: {match!r} not in {str(e)!r}"
        return str(e)
    raise AssertionError(f"{getattr(fn, '__name__', fn)}{args} did not raise {cls.__name__}")


def address(buf: memoryview) -> int:
    """The first byte's address, by onesided and, independently, by numpy."""
    addr = onesided.Get_address(buf)
    assert addr == np.frombuffer(buf, np.uint8).ctypes.data, (addr, np.frombuffer(buf, np.uint8).ctypes.data)
    return addr


def check_shared(mode: str) -> None:
    """Allocate_shared with a different size per rank (rank 0: none, rank r:
    8*(r+1) int64) and a different disp_unit on rank 3 (1, the others 8).

    * Shared_query(r) for every r gives a writable view of exactly r's size
      and r's disp_unit; the own one is the window's memory (attrs).
    * "contig" (the default): each non-empty segment starts where the
      previous non-empty one ends. "noncontig" (alloc_shared_noncontig):
      each non-empty segment is page aligned. Memory starts zeroed.
    * Plain numpy stores into the own segment, then Sync/Barrier/Sync, are
      seen by direct loads of every other rank: the views really are one
      shared memory, not copies.
    * Shared_query(PROC_NULL) is rank 1's segment (the first non-empty).
    * RMA works on it and agrees with direct loads: fetch-and-add on rank 1's
      element 0 from every rank yields unique tickets and a total that a
      direct load on other ranks shows; a direct store by rank 2 into rank
      1's segment is what rank 0's Get returns; Puts honour each target's own
      disp_unit.
    """
    assert size >= 4
    counts = [0 if r == 0 else 8 * (r + 1) for r in range(size)]
    units = [1 if r == 3 else 8 for r in range(size)]
    info = dict(INFO)
    if mode == "noncontig":
        info["alloc_shared_noncontig"] = "true"
    else:
        assert mode == "contig", mode
    win = Window.Allocate_shared(8 * counts[rank], disp_unit=units[rank], info=info, comm=comm)
    harness.check_provider(win)
    assert win.flavor == onesided.FLAVOR_SHARED, win.flavor
    assert win.model == onesided.WIN_UNIFIED, win.model

    segs, addrs = [], []
    for r in range(size):
        buf, du = win.Shared_query(r)
        # Writable bytes: MPI.buffer under mpiexec, onesided.buffer under the launcher.
        assert not buf.readonly and memoryview(buf).format == "B", buf
        assert buf.nbytes == 8 * counts[r], (r, buf.nbytes, counts[r])
        assert du == units[r], (r, du, units[r])
        segs.append(np.frombuffer(buf, np.int64))
        addrs.append(address(buf) if counts[r] else None)
        assert (segs[r] == 0).all(), f"rank {r}'s segment is not zeroed"
    base, nbytes, du = win.attrs
    assert (nbytes, du) == (8 * counts[rank], units[rank]), win.attrs
    if counts[rank]:
        assert base == addrs[rank], (base, addrs[rank])
        assert np.frombuffer(win, np.uint8).ctypes.data == addrs[rank]
    nonempty = [r for r in range(size) if counts[r]]
    for r, s in zip(nonempty, nonempty[1:]):
        if mode == "contig":
            assert addrs[s] == addrs[r] + 8 * counts[r], f"segment {s} does not follow segment {r}"
        else:
            assert addrs[s] % 4096 == 0, f"segment {s} at {addrs[s]:#x} is not page aligned"
    if mode == "noncontig":
        assert addrs[nonempty[0]] % 4096 == 0
    comm.Barrier()  # every rank has seen the zeroed memory before anyone stores

    # PROC_NULL: the first rank with a non-empty segment.
    nulls = [onesided.PROC_NULL]
    if MPI_COMM:
        from mpi4py import MPI

        nulls.append(MPI.PROC_NULL)
    for null in nulls:
        buf, du = win.Shared_query(null)
        assert buf.nbytes == 8 * counts[1] and du == units[1], (null, buf.nbytes, du)
        assert address(buf) == addrs[1], null

    # Plain stores into the own segment, loads of everyone's.
    segs[rank][:] = 1000 * rank + np.arange(counts[rank])
    win.Sync()
    comm.Barrier()
    win.Sync()
    for r in range(size):
        assert (segs[r] == 1000 * r + np.arange(counts[r])).all(), (r, segs[r])
    comm.Barrier()  # every rank has checked before the counter below changes

    # Fetch-and-add through the window on rank 1's element 0 (initially 1000).
    reps = 100
    one, got = np.ones(1, np.int64), np.zeros(1, np.int64)
    tickets = []
    win.Lock_all()
    for _ in range(reps):
        win.Fetch_and_op(one, got, 1, 0, onesided.SUM)
        win.Flush(1)
        tickets.append(int(got[0]))
    win.Unlock_all()
    comm.Barrier()
    win.Sync()
    everything = sorted(t for ts in comm.allgather(tickets) for t in ts)
    assert everything == list(range(1000, 1000 + reps * size)), "duplicate or missing tickets"
    assert segs[1][0] == 1000 + reps * size, (segs[1][0], 1000 + reps * size)

    # A direct store into another rank's segment is what RMA reads there; Puts
    # use each target's own disp_unit (rank 3: bytes, rank 2: int64 elements).
    if rank == 2:
        segs[1][1] = 777
    win.Sync()
    comm.Barrier()
    if rank == 0:
        back = np.zeros(1, np.int64)
        with win.lock(1, shared=True):
            win.Get(back, 1, 1)
        assert back[0] == 777, back
        with win.lock(3):
            win.Put(np.array([4242], np.int64), 3, 16)
        with win.lock(2):
            win.Put(np.array([4343], np.int64), 2, 2)
    comm.Barrier()
    win.Sync()
    assert segs[3][2] == 4242 and segs[2][2] == 4343, (segs[3][:4], segs[2][:4])
    assert segs[3][1] == 3001 and segs[3][3] == 3003 and segs[2][1] == 2001 and segs[2][3] == 2003
    comm.Barrier()
    win.Free()


def check_dynamic(mode: str) -> None:
    """Create_dynamic with two attached int64 arrays per rank, addressed by
    absolute address (onesided.Get_address).

    * Every rank adds 1 to every element of every other rank's arrays, many
      times, by whole-array Accumulate, plus Fetch_and_op on single elements
      by address: each array then holds exactly the expected counts (a wrong
      address translation, or regions mixed up, misses or doubles some), and
      Get by address returns them.
    * After rank 1 Detaches one array, rank 0 gets BoundsError (in a new
      epoch) for an op on it; also for a range straddling the end of an
      attached array and for a never-attached address. Nothing was written.
    * An array rank 1 Attaches while rank 0's epoch is open is reachable in
      that same epoch (the origin refreshes its view when an address is not
      found), and the epoch still works after the errors.
    """
    win = Window.Create_dynamic(info=INFO, comm=comm)
    harness.check_provider(win)
    assert win.flavor == onesided.FLAVOR_DYNAMIC, win.flavor
    a, b, later = np.zeros(16, np.int64), np.zeros(40, np.int64), np.zeros(8, np.int64)
    win.Attach(a)
    win.Attach(b)
    assert onesided.Get_address(a) == a.ctypes.data and onesided.Get_address(b[3:]) == b.ctypes.data + 24
    addrs = comm.allgather((onesided.Get_address(a), onesided.Get_address(b), onesided.Get_address(later)))
    others = [t for t in range(size) if t != rank]
    reps = 30
    ones_a, ones_b, one = np.ones(16, np.int64), np.ones(40, np.int64), np.ones(1, np.int64)
    fetched = np.full(reps * len(others), -1, np.int64)
    comm.Barrier()
    with win.lock_all():
        for k in range(reps):
            for i, t in enumerate(others):
                win.Accumulate(ones_a, t, addrs[t][0])
                win.Accumulate(ones_b, t, addrs[t][1])
                slot = fetched[k * len(others) + i :][:1]
                win.Fetch_and_op(one, slot, t, addrs[t][1] + 8 * (k % 40), onesided.SUM)
    comm.Barrier()
    n_others = size - 1
    want_a = np.full(16, reps * n_others, np.int64)
    want_b = reps * n_others + n_others * (np.arange(40) < reps).astype(np.int64)
    assert (a == want_a).all(), a
    assert (b == want_b).all(), b
    assert ((fetched >= 0) & (fetched < reps * n_others + n_others)).all(), fetched
    back = {t: np.zeros(40, np.int64) for t in others}
    with win.lock_all():
        for t in others:
            win.Get(back[t], t, addrs[t][1])
    for t in others:
        assert (back[t] == want_b).all(), (t, back[t])
    comm.Barrier()

    if rank == 1:
        win.Detach(b)
    comm.Barrier()
    if rank == 0:
        win.Lock(1)
        expect_error(onesided.BoundsError, win.Accumulate, one, 1, addrs[1][1])  # detached
        expect_error(onesided.BoundsError, win.Put, one, 1, addrs[1][1] + 8)
        expect_error(onesided.BoundsError, win.Put, np.ones(2, np.int64), 1, addrs[1][0] + 8 * 15)  # straddles
        expect_error(onesided.BoundsError, win.Get, np.zeros(2, np.int64), 1, addrs[1][0] + 8 * 15)
        expect_error(onesided.BoundsError, win.Accumulate, one, 1, addrs[1][2])  # never attached
        win.Accumulate(one, 1, addrs[1][0] + 8 * 15)  # the last element: legal
    comm.Barrier()
    if rank == 1:
        win.Attach(later)
    comm.Barrier()
    if rank == 0:
        win.Accumulate(np.full(8, 5, np.int64), 1, addrs[1][2])  # attached inside rank 0's epoch
        win.Unlock(1)
    comm.Barrier()
    if rank == 1:
        assert (later == 5).all(), later
        assert (b == want_b).all(), "a detached region was written"
        assert a[15] == want_a[15] + 1 and (a[:15] == want_a[:15]).all(), a
        win.Detach(later)
    comm.Barrier()
    win.Free()  # a is still attached: Free detaches it


def check_pscw(mode: str) -> None:
    """Active target on a ring: every rank calls Start([right]) BEFORE
    Post([left]), Puts into its slot at right, Complete(), Wait(). Start must
    not block (a Start that waits for the target's Post deadlocks here, the
    test timeout catches it); after Wait the slot from left holds its value
    of this round and no other slot changed. Six rounds, groups as list,
    tuple and range. Under mpiexec, again over a communicator with the ranks
    reversed, groups given as mpi4py MPI.Group of COMM_WORLD: the ranks must
    be translated to the window's communicator (untranslated, the Put's
    target is outside the Start group or the wrong process posts)."""
    right, left = (rank + 1) % size, (rank - 1) % size
    win = Window.Allocate(8 * size, disp_unit=8, info=INFO, comm=comm)
    mem = np.frombuffer(win, np.int64)
    forms = [list, tuple, lambda g: range(g[0], g[0] + 1)]
    for k in range(6):
        form = forms[k % 3]
        win.Start(form([right]))
        win.Post(form([left]))
        win.Put(np.array([100 * k + rank + 1], np.int64), right, rank)
        win.Complete()
        win.Wait()
        win.Sync()
        assert mem[left] == 100 * k + left + 1, (k, mem)
        assert all(mem[s] == 0 for s in range(size) if s != left), (k, mem)
    comm.Barrier()
    win.Free()

    if MPI_COMM:
        from mpi4py import MPI

        rev = comm.Split(0, size - 1 - rank)
        assert rev.Get_rank() == size - 1 - rank
        world = MPI.COMM_WORLD.Get_group()
        win = Window.Allocate(8 * size, disp_unit=8, info=INFO, comm=rev)
        mem = np.frombuffer(win, np.int64)
        to_group = world.Incl([right])
        from_group = world.Incl([left])
        for k in range(3):
            win.Start(to_group)
            win.Post(from_group)
            win.Put(np.array([100 * k + rank + 1], np.int64), size - 1 - right, rank)  # rank in rev
            win.Complete()
            win.Wait()
            win.Sync()
            assert mem[left] == 100 * k + left + 1, (k, mem)
        to_group.Free()
        from_group.Free()
        world.Free()
        rev.Barrier()
        win.Free()
        rev.Free()


def check_pscw_test(mode: str) -> None:
    """Test is the non-blocking Wait. Rank 1 Posts to rank 0; rank 0 Starts,
    Puts, then waits in a Barrier before Complete. Rank 1's Test before that
    Barrier must be False (rank 0 cannot have completed); after it rank 1
    spins on Test (or, odd rounds, calls Wait) until True and sees the Put.
    True ends the exposure epoch: Test and Wait then raise EpochError, and
    the next round's Post works."""
    win = Window.Allocate(8 * 8, disp_unit=8, info=INFO, comm=comm)
    mem = np.frombuffer(win, np.int64)
    for k in range(4):
        if rank == 1:
            win.Post([0])
            early = win.Test()
            assert early is False, f"Test returned {early!r} before the origin called Complete"
            comm.Barrier()
            if k % 2 == 0:
                spins = 0
                while not win.Test():
                    spins += 1
            else:
                win.Wait()
            win.Sync()
            assert mem[k] == 10 + k, (k, mem)
            expect_error(onesided.EpochError, win.Test)
            expect_error(onesided.EpochError, win.Wait)
        elif rank == 0:
            win.Start([1])
            win.Put(np.array([10 + k], np.int64), 1, k)
            comm.Barrier()
            win.Complete()
        else:
            comm.Barrier()
        comm.Barrier()
    win.Free()


def check_requests(mode: str) -> None:
    """Request-based ops inside one Lock_all epoch to every other rank: Rget
    of the target's data, Rput of a marker, Raccumulate and Rget_accumulate
    (SUM 1) on one counter. Some requests are Waited at once (an Rget's
    buffer must then already be exact), an Rget followed by Flush must Test
    True at once, the rest complete at Unlock_all: afterwards every Rget is
    exact, every request Tests True, Waitall returns. At the targets the
    markers and the counter are exact; the Rget_accumulate tickets are
    unique across origins, and each origin's increase (accumulate ordering
    within one origin)."""
    K = 8
    counter = K + size
    win = Window.Allocate(8 * (counter + 1), disp_unit=8, info=INFO, comm=comm)
    mem = np.frombuffer(win, np.int64)
    mem[:K] = 1000 * rank + np.arange(K)
    win.Sync()
    comm.Barrier()
    others = [t for t in range(size) if t != rank]
    reps = 20
    got = {t: np.full(K, -1, np.int64) for t in others}
    flushed = {t: np.full(2, -1, np.int64) for t in others}
    tickets = {t: np.full(reps, -1, np.int64) for t in others}
    one = np.ones(1, np.int64)
    requests: list[onesided.Request] = []
    win.Lock_all()
    for i, t in enumerate(others):
        r = win.Rget(got[t], t)
        requests.append(r)
        if i % 2 == 0:
            r.Wait()
            assert (got[t] == 1000 * t + np.arange(K)).all(), ("Wait returned before the Rget completed", got[t])
        r = win.Rget(flushed[t], t, 3)
        win.Flush(t)
        assert r.Test() is True, "Flush did not complete an Rget to its target"
        assert (flushed[t] == 1000 * t + np.arange(3, 5)).all(), flushed[t]
        requests.append(win.Rput(np.array([rank + 1], np.int64), t, K + rank))
        for j in range(reps):
            requests.append(win.Raccumulate(one, t, counter))
            r = win.Rget_accumulate(one, tickets[t][j : j + 1], t, counter, onesided.SUM)
            if j % 3 == 0:
                r.Wait()
            requests.append(r)
    onesided.Request.Waitall(requests[: len(requests) // 2])
    win.Unlock_all()
    for r in requests:
        assert r.Test() is True, "a request not complete after Unlock_all"
    onesided.Request.Waitall(requests)
    for t in others:
        assert (got[t] == 1000 * t + np.arange(K)).all(), (t, got[t])
        assert (np.diff(tickets[t]) > 0).all(), ("Rget_accumulate tickets out of program order", tickets[t])
    comm.Barrier()
    win.Sync()
    assert all(mem[K + s] == (0 if s == rank else s + 1) for s in range(size)), mem
    total = 2 * reps * (size - 1)
    assert mem[counter] == total, (mem[counter], total)
    assert (mem[:K] == 1000 * rank + np.arange(K)).all(), mem[:K]
    for t in range(size):
        mine = tickets.get(t, np.zeros(0, np.int64)).tolist()
        theirs = [x for ts in comm.allgather(mine) for x in ts]
        if t == rank:
            assert len(theirs) == reps * (size - 1) and len(set(theirs)) == len(theirs), "duplicate tickets"
            assert all(0 <= x < total for x in theirs), theirs
    comm.Barrier()
    win.Free()


def check_misuse(mode: str) -> None:
    """Every misuse of epochs raises EpochError at the caller, before anything
    is sent, and leaves the window usable (a Put/Get round trip afterwards
    and every legal epoch still completes). Each rank does the same with its
    right neighbour as target and left neighbour as origin, so the legal
    PSCW pairs match up."""
    right, left = (rank + 1) % size, (rank - 1) % size
    win = Window.Allocate(8 * (size + 2), disp_unit=8, info=INFO, comm=comm)
    mem = np.frombuffer(win, np.int64)
    one, res = np.ones(1, np.int64), np.zeros(1, np.int64)
    # Slots: [0, size) still_works() of each origin, size the PSCW Put, size+1
    # a slot nobody checks.
    pscw, spare = size, size + 1
    ok = [0]

    def still_works() -> None:
        ok[0] += 1
        val, back = np.array([1000 * ok[0] + rank], np.int64), np.zeros(1, np.int64)
        with win.lock(right):
            win.Put(val, right, rank)
            win.Flush(right)
            win.Get(back, right, rank)
        assert back[0] == val[0], (back, val)

    ops = {
        "Put": lambda t: win.Put(one, t, spare),
        "Get": lambda t: win.Get(res, t, spare),
        "Accumulate": lambda t: win.Accumulate(one, t, spare),
        "Get_accumulate": lambda t: win.Get_accumulate(one, res, t, spare),
        "Fetch_and_op": lambda t: win.Fetch_and_op(one, res, t, spare),
        "Compare_and_swap": lambda t: win.Compare_and_swap(one, one, res, t, spare),
        "Rput": lambda t: win.Rput(one, t, spare),
        "Rget": lambda t: win.Rget(res, t, spare),
        "Raccumulate": lambda t: win.Raccumulate(one, t, spare),
        "Rget_accumulate": lambda t: win.Rget_accumulate(one, res, t, spare),
    }
    # Ops outside any epoch.
    for name, op in ops.items():
        expect_error(onesided.EpochError, op, right)
    expect_error(onesided.EpochError, ops["Put"], right, match="outside an access epoch")
    # Complete without Start; Wait/Test without Post.
    expect_error(onesided.EpochError, win.Complete)
    expect_error(onesided.EpochError, win.Wait)
    expect_error(onesided.EpochError, win.Test)
    still_works()

    # Lock / Lock_all inside a fence epoch in which ops were issued.
    win.Fence()
    win.Put(one, right, spare)
    expect_error(onesided.EpochError, win.Lock, right, match="inside a fence epoch")
    expect_error(onesided.EpochError, win.Lock_all, match="inside a fence epoch")
    win.Fence(onesided.MODE_NOSUCCEED)
    still_works()

    # Nested passive epochs; Fence, Start and Free inside them.
    win.Lock(right)
    expect_error(onesided.EpochError, win.Lock, right, match="already locked")
    expect_error(onesided.EpochError, win.Fence, match="Fence inside")
    expect_error(onesided.EpochError, win.Free, match="Free while")
    win.Unlock(right)
    win.Lock_all()
    expect_error(onesided.EpochError, win.Lock_all)
    expect_error(onesided.EpochError, win.Lock, right)
    expect_error(onesided.EpochError, win.Start, [right])
    expect_error(onesided.EpochError, win.Fence)
    expect_error(onesided.EpochError, win.Free)
    win.Unlock_all()
    still_works()

    # PSCW misuse around one legal round.
    comm.Barrier()
    win.Post([left])
    expect_error(onesided.EpochError, win.Post, [left])
    expect_error(onesided.EpochError, ops["Put"], right)  # exposure is not access
    win.Start([right])
    expect_error(onesided.EpochError, win.Start, [right])
    expect_error(onesided.EpochError, win.Lock, right)
    expect_error(onesided.EpochError, win.Fence)
    expect_error(onesided.EpochError, win.Free)
    expect_error(onesided.EpochError, ops["Put"], rank)  # itself: not in the Start group
    expect_error(onesided.EpochError, ops["Rget"], rank)
    win.Put(np.array([-(rank + 1)], np.int64), right, pscw)
    win.Complete()
    expect_error(onesided.EpochError, win.Complete)
    expect_error(onesided.EpochError, win.Free)  # the Post epoch is still open
    win.Wait()
    expect_error(onesided.EpochError, win.Wait)
    expect_error(onesided.EpochError, win.Test)
    win.Sync()
    assert mem[pscw] == -(left + 1), mem
    still_works()
    comm.Barrier()
    win.Free()
    expect_error(onesided.EpochError, win.Lock, right)


CHECKS = {
    "shared": check_shared,
    "dynamic": check_dynamic,
    "pscw": check_pscw,
    "pscw_test": check_pscw_test,
    "requests": check_requests,
    "misuse": check_misuse,
}

if __name__ == "__main__":
    name = sys.argv[1]
    mode = sys.argv[2] if len(sys.argv) > 2 else "default"
    CHECKS[name](mode)
    comm.Barrier()
    if rank == 0:
        print(f"PASS {name}")
