"""Accumulate ordering (issue 4) on real ranks: litmus tests that catch a
reordering of two accumulate-style ops in flight together.

Usage (from tests/test_ordering.py):
    <launcher> -n N ordering.py CHECK [MODE] [--expect-violations]
MODE "default" leaves accumulate_ordering at its default (rar,raw,war,waw);
"none" sets accumulate_ordering=none, so nothing orders the two ops of a
trial. Nasty mode comes from the environment (ONESIDED_NASTY=<seed>, set by
the driver): every op is held at the origin and issued at the next flush or
unlock in a random order that keeps only the orders the window requires.

Every rank is an origin (to its right neighbour) and a target (of its left
one) at once. Rank 0 prints one line per litmus,
``LITMUS <kind> trials=<n> violations=<v> ...``, then "PASS CHECK". With the
default ordering any violation fails; with --expect-violations (the driver
passes it for ordering "none" in nasty mode) zero violations fail: nasty mode
would then not be reordering anything.
"""

from __future__ import annotations

import os
import sys
import threading

import numpy as np

import harness
import onesided
from onesided import Window

comm = harness.comm()
rank, size = comm.Get_rank(), comm.Get_size()

TRIALS = 2000  # per origin
BATCH = 250  # trials issued inside one Lock/Unlock epoch, no flush in between


def window_info(mode: str) -> dict[str, str]:
    if mode == "none":
        return harness.info(accumulate_ordering="none")
    assert mode == "default", mode
    return harness.info()


def check_window(win: Window, mode: str) -> str:
    """The window reports the ordering and nasty mode the test asked for;
    returns "on"/"off" for the LITMUS line."""
    harness.check_provider(win)
    info = win.Get_info()
    want = "none" if mode == "none" else "rar,raw,war,waw"
    assert info["accumulate_ordering"] == want, (info["accumulate_ordering"], want)
    assert isinstance(info["onesided_ordering"], str) and info["onesided_ordering"], info
    if rank == 0:
        print(f"ORDERING {win.provider}: {info['onesided_ordering']}", flush=True)
    nasty = info["onesided_nasty"]
    if os.environ.get("ONESIDED_NASTY"):
        assert nasty != "off" and nasty.startswith("seed "), nasty
        int(nasty.split()[1])
        return "on"
    assert nasty == "off", nasty
    return "off"


def values(origin: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-trial values an origin writes: first[i] != second[i], both
    non-zero (the window starts zeroed) and unique to the origin."""
    first = 2 * np.arange(1, n + 1, dtype=np.int64) + 10**7 * (origin + 1)
    return first, first + 1


def report(kind: str, violations: int, trials: int, mode: str, nasty: str, win: Window) -> int:
    """Sum the violations of every origin; rank 0 prints the LITMUS line."""
    total = sum(comm.allgather(int(violations)))
    if rank == 0:
        print(f"LITMUS {kind} trials={trials * size} violations={total} ordering={mode} nasty={nasty} "
              f"provider={win.provider} fast_path={win.Get_info()['onesided_fast_path']}", flush=True)
    return total


def expect(total: int, mode: str, expect_violations: bool) -> None:
    if mode == "default":
        assert total == 0, f"{total} ordering violations with accumulate_ordering at its default"
    if expect_violations:
        assert total > 0, "no violation with accumulate_ordering=none in nasty mode: nothing was reordered"


def check_litmus(kind: str, mode: str, expect_violations: bool) -> None:
    """Two accumulate-style ops to one slot, in flight together (no flush in
    between; BATCH trials per Lock epoch, each trial its own slot, its own
    values and its own result element):

    * waw: Accumulate(REPLACE, a) then Accumulate(REPLACE, b); the target's
      slot must end as b. A reordering leaves a.
    * raw: Accumulate(REPLACE, v) then Fetch_and_op(NO_OP); the fetch must
      return v. A reordering returns 0 (the slot's initial value).
    * war: Fetch_and_op(NO_OP) then Accumulate(REPLACE, v); the fetch must
      return 0. A reordering returns v.

    Besides the ordering, every outcome must be one of the two legal ones
    (and the target end with the one value written where that is certain):
    anything else is lost or corrupted data, which fails in every mode."""
    win = Window.Allocate(8 * TRIALS, disp_unit=8, info=window_info(mode), comm=comm)
    nasty = check_window(win, mode)
    target, source = (rank + 1) % size, (rank - 1) % size
    first, second = values(rank, TRIALS)
    result = np.full(TRIALS, -1, np.int64)
    for start in range(0, TRIALS, BATCH):
        win.Lock(target)
        for i in range(start, start + BATCH):
            slot = result[i : i + 1]
            if kind == "waw":
                win.Accumulate(first[i : i + 1], target, i, onesided.REPLACE)
                win.Accumulate(second[i : i + 1], target, i, onesided.REPLACE)
            elif kind == "raw":
                win.Accumulate(first[i : i + 1], target, i, onesided.REPLACE)
                win.Fetch_and_op(None, slot, target, i, onesided.NO_OP)
            else:
                win.Fetch_and_op(None, slot, target, i, onesided.NO_OP)
                win.Accumulate(first[i : i + 1], target, i, onesided.REPLACE)
        win.Unlock(target)
    comm.Barrier()
    win.Sync()
    landed = np.frombuffer(win, np.int64)  # what `source` left here
    src_first, src_second = values(source, TRIALS)
    if kind == "waw":
        legal = (landed == src_first) | (landed == src_second)
        assert legal.all(), f"slots hold neither written value: {landed[~legal][:5]}"
        violations = int((landed != src_second).sum())  # counted at the target
    else:
        assert (landed == src_first).all(), f"target slots lost the write: {landed[landed != src_first][:5]}"
        good, bad = (first, 0) if kind == "raw" else (0, first)
        legal = (result == good) | (result == bad)
        assert legal.all(), f"fetched neither legal value: {result[~legal][:5]}"
        violations = int((result != good).sum())  # counted at the origin
    total = report(kind, violations, TRIALS, mode, nasty, win)
    expect(total, mode, expect_violations)
    comm.Barrier()
    win.Free()


def check_large_then_small(mode: str, expect_violations: bool) -> None:
    """A large Accumulate(SUM) of 2**18 ones over the whole target window,
    then, in the same epoch and without a flush, ten small Accumulate(REPLACE)
    of 8 elements inside that range (two of them overlapping each other, one
    at each end). Three such epochs, each with other places. The target must
    end exactly as program order says: the last REPLACE values where they
    were written, the number of later SUMs added on top, and the number of
    SUMs everywhere else. An implementation that lets a small op overtake the
    large one (e.g. native atomics ordered only up to max_order_waw_size, or a
    large op split into chunks issued after the small ones) leaves the small
    ranges summed over, or 1 short."""
    n = 2**18
    rounds, places, width = 3, 10, 8
    win = Window.Allocate(8 * n, disp_unit=8, info=window_info(mode), comm=comm)
    nasty = check_window(win, mode)
    target, source = (rank + 1) % size, (rank - 1) % size
    ones = np.ones(n, np.int64)

    def plan(origin: int) -> list[list[tuple[int, np.ndarray]]]:
        out = []
        for r in range(rounds):
            starts = [0, n - width] + [(k * 26203 + r * 7919 + 1) % (n - width) for k in range(places - 3)]
            starts.append(starts[-1] + width // 2)  # overlaps the one before: the later write wins
            out.append([(s, -(10**6 * (origin + 1) + 1000 * r + 10 * k + np.arange(width, dtype=np.int64)))
                        for k, s in enumerate(starts)])
        return out

    for small in plan(rank):
        with win.lock(target):
            win.Accumulate(ones, target, 0, onesided.SUM)
            for start, vals in small:
                win.Accumulate(vals, target, start, onesided.REPLACE)
    expected = np.zeros(n, np.int64)
    for small in plan(source):
        expected += 1
        for start, vals in small:
            expected[start : start + width] = vals
    comm.Barrier()
    win.Sync()
    got = np.frombuffer(win, np.int64)
    wrong = np.flatnonzero(got != expected)
    violations = len(wrong)
    # Here "trials" counts epochs and "violations" wrong elements.
    total = report("large_then_small", violations, rounds, mode, nasty, win)
    assert total == 0 or mode != "default", (
        f"{violations} elements differ from program order here, e.g. at {wrong[:5]}: "
        f"got {got[wrong[:5]]}, expected {expected[wrong[:5]]}")
    expect(total, mode, expect_violations)
    comm.Barrier()
    win.Free()


def check_threads_order(mode: str, expect_violations: bool) -> None:
    """Two Python threads per rank issue litmus trials concurrently inside
    one Lock_all epoch opened by the main thread, each on its own slots:
    Accumulate(REPLACE, a), Accumulate(REPLACE, b), Fetch_and_op(NO_OP) per
    trial, and Flush(target) after each batch. The fetch must return b (raw)
    and the slot must end as b (waw), and a thread's Flush must have
    completed (written the result of) every fetch of its batch, whatever the
    other thread is doing. Ordering is per origin thread, so an
    implementation that tracks order per process but lets one thread's flush
    (or, in nasty mode, its release of held ops) scramble the other thread's
    trials fails, as does one that is not thread-safe at all."""
    nthreads, per_thread = 2, 1000
    slots = nthreads * per_thread
    win = Window.Allocate(8 * slots, disp_unit=8, info=window_info(mode), comm=comm)
    nasty = check_window(win, mode)
    target, source = (rank + 1) % size, (rank - 1) % size
    first, second = values(rank, slots)
    result = np.full(slots, -1, np.int64)
    errors: list[BaseException] = []
    incomplete = [0] * nthreads

    def worker(t: int) -> None:
        try:
            lo = t * per_thread
            for start in range(lo, lo + per_thread, BATCH):
                for i in range(start, start + BATCH):
                    win.Accumulate(first[i : i + 1], target, i, onesided.REPLACE)
                    win.Accumulate(second[i : i + 1], target, i, onesided.REPLACE)
                    win.Fetch_and_op(None, result[i : i + 1], target, i, onesided.NO_OP)
                win.Flush(target)
                # Flush completed this thread's batch, whatever the other thread does.
                incomplete[t] += int((result[start : start + BATCH] == -1).sum())
        except BaseException as e:  # re-raised by the main thread
            errors.append(e)

    win.Lock_all()
    threads = [threading.Thread(target=worker, args=(t,)) for t in range(nthreads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    win.Unlock_all()
    if errors:
        raise errors[0]
    assert incomplete == [0] * nthreads, f"fetches not complete after their thread's Flush: {incomplete}"
    legal = (result == 0) | (result == first) | (result == second)
    assert legal.all(), f"fetched a value never written: {result[~legal][:5]}"
    raw = int((result != second).sum())
    for i in np.flatnonzero(result != second)[:5]:
        print(f"rank {rank}: raw violation in slot {i} (thread {i // per_thread}, batch position {i % BATCH}): "
              f"fetched {result[i]}, first {first[i]}, second {second[i]}", file=sys.stderr, flush=True)
    comm.Barrier()
    win.Sync()
    landed = np.frombuffer(win, np.int64)
    src_first, src_second = values(source, slots)
    legal = (landed == src_first) | (landed == src_second)
    assert legal.all(), f"slots hold neither written value: {landed[~legal][:5]}"
    waw = int((landed != src_second).sum())
    for i in np.flatnonzero(landed != src_second)[:5]:
        print(f"rank {rank}: waw violation in slot {i} (thread {i // per_thread}, batch position {i % BATCH}): "
              f"holds {landed[i]}, first {src_first[i]}, second {src_second[i]}", file=sys.stderr, flush=True)
    total = report("threads_raw", raw, slots, mode, nasty, win)
    total += report("threads_waw", waw, slots, mode, nasty, win)
    expect(total, mode, expect_violations)
    comm.Barrier()
    win.Free()


CHECKS = {
    "litmus_raw": lambda m, e: check_litmus("raw", m, e),
    "litmus_waw": lambda m, e: check_litmus("waw", m, e),
    "litmus_war": lambda m, e: check_litmus("war", m, e),
    "large_then_small": check_large_then_small,
    "threads_order": check_threads_order,
}

if __name__ == "__main__":
    name = sys.argv[1]
    rest = sys.argv[2:]
    expect_violations = "--expect-violations" in rest
    modes = [a for a in rest if not a.startswith("--")]
    mode = modes[0] if modes else "default"
    CHECKS[name](mode, expect_violations)
    comm.Barrier()
    if rank == 0:
        print(f"PASS {name}")
