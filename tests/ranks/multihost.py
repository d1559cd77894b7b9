"""Ranks on several (simulated) hosts: tests/test_multihost.py.

Usage: <launcher across hosts> multihost.py

One job checks, over the window's default choices (no provider, no info):

* placement: every rank reports its hostname and its address on eth0 (a
  simulated host's one interface); rank 0 prints
  ``HOSTS <rank>=<hostname>@<address> ...`` for the driver to compare with
  what it asked. Hosts are told apart by address: the driver may give them
  all one hostname;
* the path: ranks on different hosts never take the shared-memory or
  cross-memory path, and go through a network provider; under MPI, a
  window over the ranks of one host does take the shared-memory path (so
  the check above is not vacuous), and Allocate_shared across hosts raises;
* atomics: fetch-and-add tickets on rank 0 are exact and unique;
* locks: a non-atomic read-modify-write under an exclusive lock loses no update;
* put/get: a pattern put to the right neighbour is read back by a get;
* ordering: Accumulate(REPLACE) then Fetch_and_op(NO_OP) to one slot, in
  flight together, always fetches the value just written;
* notified RMA: each of a run of Put_notify to the right neighbour is in
  the target's memory when its Wait_notify for that count returns, with no
  flush, barrier or flag between them.

Rank 0 prints ``PASS multihost`` at the end.
"""

from __future__ import annotations

import fcntl
import socket
import struct

import numpy as np

import harness
import onesided
from onesided import Window

comm = harness.comm()
rank, size = comm.Get_rank(), comm.Get_size()
TICKETS = 100  # per rank
INCREMENTS = 20  # per rank, under the exclusive lock
TRIALS = 300  # ordering trials per rank
CLOSE_PATHS = ("shared-memory", "cross-memory")


def eth0_address() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("256s", b"eth0")
        reply = fcntl.ioctl(probe.fileno(), 0x8915, request)  # SIOCGIFADDR
    return socket.inet_ntoa(reply[20:24])


def check_placement() -> list[str]:
    """Every rank's host as ``hostname@address``; hosts differ by address."""
    hosts: list[str] = comm.allgather(f"{socket.gethostname()}@{eth0_address()}")
    if rank == 0:
        print("HOSTS " + " ".join(f"{r}={h}" for r, h in enumerate(hosts)), flush=True)
    return [h.split("@")[1] for h in hosts]


def check_path(win: Window, spans_hosts: bool) -> None:
    path = win.Get_info()["onesided_path"]
    if spans_hosts:
        assert path not in CLOSE_PATHS, f"ranks on different hosts took the {path} path"
        assert win.atomics.path not in CLOSE_PATHS, win.atomics.path
        assert not win.provider.startswith("shm"), win.provider
        assert win.atomics.executor.kind == "provider", win.atomics.executor  # rxm, in software at the target
    if rank == 0:
        print(f"PATH {path} provider={win.provider} atomics={win.atomics.summary()}", flush=True)


def check_tickets(win: Window) -> None:
    one, ticket = np.ones(1, np.int64), np.zeros(1, np.int64)
    mine = []
    with win.lock_all():
        for _ in range(TICKETS):
            win.Fetch_and_op(one, ticket, 0, 0, onesided.SUM)
            win.Flush(0)
            mine.append(int(ticket[0]))
    everyone = comm.allgather(mine)
    tickets = sorted(t for got in everyone for t in got)
    assert tickets == list(range(TICKETS * size)), f"tickets not exact and unique: {tickets[:10]}..."
    for got in everyone:
        assert got == sorted(got), "one rank's tickets went backwards"


def check_lock(win: Window) -> None:
    value = np.zeros(1, np.int64)
    for _ in range(INCREMENTS):
        win.Lock(0, onesided.LOCK_EXCLUSIVE)
        win.Get(value, 0, 1)
        win.Flush(0)
        value[0] += 1
        win.Put(value, 0, 1)
        win.Unlock(0)
    comm.Barrier()
    win.Lock(0, onesided.LOCK_SHARED)
    win.Get(value, 0, 1)
    win.Unlock(0)
    assert value[0] == INCREMENTS * size, f"exclusive lock lost updates: {value[0]} != {INCREMENTS * size}"


def check_put_get(win: Window) -> None:
    right, left = (rank + 1) % size, (rank - 1) % size
    pattern = np.arange(16, dtype=np.int64) + 1000 * rank
    with win.lock_all():
        win.Put(pattern, right, 2)
        win.Flush(right)
    comm.Barrier()
    back = np.zeros(16, np.int64)
    with win.lock_all():
        win.Get(back, right, 2)
        win.Flush(right)
    assert (back == pattern).all(), f"get returned {back[:4]}... after put of {pattern[:4]}..."
    mine = np.frombuffer(win, np.int64)[2:18]
    assert (mine == np.arange(16) + 1000 * left).all(), "the put did not land in the target's memory"


def check_ordering(win: Window) -> None:
    target = (rank + 1) % size
    written = np.arange(1, TRIALS + 1, dtype=np.int64) + 10**6 * (rank + 1)
    fetched = np.full(TRIALS, -1, np.int64)
    win.Lock(target, onesided.LOCK_SHARED)
    for i in range(TRIALS):
        win.Accumulate(written[i : i + 1], target, 32 + i, onesided.REPLACE)
        win.Fetch_and_op(None, fetched[i : i + 1], target, 32 + i, onesided.NO_OP)
    win.Unlock(target)
    violations = int((fetched != written).sum())
    total = sum(comm.allgather(violations))
    if rank == 0:
        print(f"LITMUS raw trials={TRIALS * size} violations={total}", flush=True)
    assert total == 0, f"{total} read-after-write ordering violations across hosts"


def check_notify() -> None:
    """ROUNDS Put_notify to the right neighbour; the left one's data is
    checked after each Wait_notify, with nothing else between."""
    rounds = 50
    win = Window.Allocate(8 * rounds, disp_unit=8, info={"onesided_notifications": "1"}, comm=comm)
    right = (rank + 1) % size
    mine = np.frombuffer(win, np.int64)
    left = (rank - 1) % size
    late = 0
    win.Lock_all()
    for i in range(rounds):
        win.Put_notify(np.array([10**6 * (rank + 1) + i], np.int64), right, i)
        win.Wait_notify(0, i + 1)
        win.Sync()  # this rank's loads see what the notification announced
        late += int(mine[i] != 10**6 * (left + 1) + i)
    win.Unlock_all()
    total = sum(comm.allgather(late))
    if rank == 0:
        print(f"NOTIFY rounds={rounds * size} late={total}", flush=True)
    comm.Barrier()
    win.Free()
    assert total == 0, f"{total} notifications came before their data across hosts"


def check_same_host_windows(hosts: list[str]) -> None:
    """Under MPI: a window over the ranks of one host takes the shared-memory
    path, and Allocate_shared over ranks of different hosts raises."""
    if not hasattr(comm, "Split"):
        return
    order = sorted(set(hosts))
    local = comm.Split(order.index(hosts[rank]), rank)
    if local.Get_size() > 1:
        win = Window.Allocate(8, disp_unit=8, comm=local)
        path = win.Get_info()["onesided_path"]
        win.Free()
        assert path == "shared-memory", f"ranks of one host took the {path} path"
        if local.Get_rank() == 0:
            print(f"SAME-HOST {hosts[rank]} path={path}", flush=True)
    local.Free()
    try:
        Window.Allocate_shared(8, disp_unit=8, comm=comm)
    except onesided.ArgumentError as exc:
        assert "one host" in str(exc), exc
    else:
        raise AssertionError("Allocate_shared across hosts succeeded")


hosts = check_placement()
spans_hosts = len(set(hosts)) > 1
win = Window.Allocate(8 * (32 + TRIALS), disp_unit=8, comm=comm)
check_path(win, spans_hosts)
check_tickets(win)
check_lock(win)
check_put_get(win)
check_ordering(win)
comm.Barrier()
win.Free()
check_notify()
check_same_host_windows(hosts)
comm.Barrier()
if rank == 0:
    print("PASS multihost", flush=True)
