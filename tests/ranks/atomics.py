"""Generalised atomics (seeds 001/002) on real ranks.

Usage: <launcher> -n N atomics.py CHECK [MODE]; MODE "declared" makes the
window declare its op set (and relax the atomic write-after-read order, which
tcp;ofi_rxm lacks) so the path goes native where the provider allows it;
"software" keeps every atomic on the software path.
"""

from __future__ import annotations

import sys

import numpy as np

import harness
import onesided
from onesided import Window

comm = harness.comm()
rank, size = comm.Get_rank(), comm.Get_size()

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float32", "float64"]

RMW = {  # op -> (numpy reference of the new value, dtype kinds it applies to)
    onesided.RMW_INC: (lambda t, a: t + 1, "iuf"),
    onesided.RMW_SUM: (lambda t, a: t + a, "iuf"),
    onesided.RMW_PROD: (lambda t, a: t * a, "iuf"),
    onesided.RMW_MIN: (np.minimum, "iuf"),
    onesided.RMW_MAX: (np.maximum, "iuf"),
    onesided.RMW_LAND: (np.logical_and, "iu"),
    onesided.RMW_LOR: (np.logical_or, "iu"),
    onesided.RMW_LXOR: (np.logical_xor, "iu"),
    onesided.RMW_BAND: (lambda t, a: t & a, "iu"),
    onesided.RMW_BOR: (lambda t, a: t | a, "iu"),
    onesided.RMW_BXOR: (lambda t, a: t ^ a, "iu"),
    onesided.RMW_SWAP: (lambda t, a: a, "iuf"),
}
RMW2 = {  # op -> reference(target, origin, origin2)
    onesided.RMW2_MASK_SWAP: (lambda t, m, v: (t & ~m) | (v & m), "iu"),
    onesided.RMW2_COMP_SWAP_LT: (lambda t, c, s: np.where(c < t, s, t), "iuf"),
    onesided.RMW2_COMP_SWAP_LE: (lambda t, c, s: np.where(c <= t, s, t), "iuf"),
    onesided.RMW2_COMP_SWAP_EQ: (lambda t, c, s: np.where(c == t, s, t), "iuf"),
    onesided.RMW2_COMP_SWAP_GE: (lambda t, c, s: np.where(c >= t, s, t), "iuf"),
    onesided.RMW2_COMP_SWAP_GT: (lambda t, c, s: np.where(c > t, s, t), "iuf"),
    onesided.RMW2_COMP_SWAP_NE: (lambda t, c, s: np.where(c != t, s, t), "iuf"),
}


def info(mode: str) -> dict[str, str]:
    if mode == "declared":
        return harness.info(
            accumulate_ops="fetch_and_op:sum,accumulate:sum,get_accumulate:sum,compare_and_swap,"
            "rmw:inc,rmw2:comp_swap_eq",
            accumulate_ordering="rar,raw,waw",
        )
    if mode == "software":
        return harness.info(onesided_atomics="software")
    return harness.info()


def values(dt: np.dtype, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Target, origin and origin2 values that exercise both outcomes of every
    comparison (equal, smaller, larger) and mixed bits."""
    t = np.array([5, 9, 2, 7, 0, 3], dtype=np.int64)[:count]
    a = np.array([5, 3, 6, 7, 1, 12], dtype=np.int64)[:count]
    b = np.array([11, 4, 1, 8, 6, 10], dtype=np.int64)[:count]
    return t.astype(dt), a.astype(dt), b.astype(dt)


def check_one(win: Window, target: int, old: np.ndarray, call, want) -> None:
    """Set the target to `old`, apply `call(result)`, and check that result
    holds `old` and the target `want`. Put and Get are unordered with
    atomics, so each step is flushed."""
    win.Put(old, target)
    win.Flush(target)
    result = np.zeros_like(old)
    call(result)
    win.Flush(target)
    after = np.zeros_like(old)
    win.Get(after, target)
    win.Flush(target)
    with np.errstate(over="ignore"):
        want = np.asarray(want).astype(old.dtype)
    assert np.array_equal(result, old), (result, old)
    assert np.array_equal(after, want), (after, want)


def check_reference(mode: str) -> None:
    """Every Rmw and Rmw2 op against numpy, each integer dtype and the floats
    where the op makes sense, count 1 and 6, to a neighbour and to itself:
    result holds the old values, the target op(old, ...)."""
    win = Window.Allocate(64, disp_unit=1, info=harness.info(), comm=comm)
    checked = 0
    for target in sorted({(rank + 1) % size, rank}):
        with win.lock(target):
            for name in INTS + FLOATS:
                dt = np.dtype(name)
                for count in (1, 6):
                    t, a, b = values(dt, count)
                    for op, (ref, kinds) in RMW.items():
                        if dt.kind in kinds:
                            operand = None if op == onesided.RMW_INC else a
                            check_one(win, target, t, lambda r: win.Rmw(operand, r, target, 0, op), ref(t, a))
                            checked += 1
                    for op, (ref, kinds) in RMW2.items():
                        if dt.kind in kinds:
                            check_one(win, target, t, lambda r: win.Rmw2(a, b, r, target, 0, op), ref(t, a, b))
                            checked += 1
    # Ops with no meaning on the dtype, and a misplaced op, are refused.
    with win.lock(rank):
        for bad, err in ((lambda: win.Rmw(np.ones(1), np.zeros(1), rank, 0, onesided.RMW_BAND),
                          onesided.UnsupportedError),
                         (lambda: win.Rmw(np.ones(1, np.int64), np.zeros(1, np.int64), rank, 0,
                                          onesided.RMW2_MASK_SWAP), onesided.ArgumentError),
                         (lambda: win.Rmw(np.ones(2, np.int64), np.zeros(1, np.int64), rank, 0),
                          onesided.ArgumentError)):
            try:
                bad()
            except err:
                pass
            else:
                raise AssertionError(f"no {err.__name__}")
    assert checked > 300, checked
    comm.Barrier()
    win.Free()


def check_mixed(mode: str) -> None:
    """Every kind of accumulate-style call increments one int64 word at once
    from every rank; the final value is the number of increments."""
    win = Window.Allocate(8, disp_unit=8, info=info(mode), comm=comm)
    harness.check_provider(win)
    path = win.atomics["sum", "int64"]
    rounds = 60
    one = np.ones(1, np.int64)
    got = np.zeros(1, np.int64)
    increments = 0
    with win.lock_all():
        for i in range(rounds):
            kind = (i + rank) % 6
            if kind == 0:
                win.Fetch_and_op(one, got, 0)
            elif kind == 1:
                win.Accumulate(one, 0)
            elif kind == 2:
                win.Get_accumulate(one, got, 0)
            elif kind == 3:
                win.Rmw(None, got, 0, 0, onesided.RMW_INC)
            else:  # compare-and-swap loops: kind 4 with CAS, kind 5 with Rmw2 COMP_SWAP_EQ
                cur = np.zeros(1, np.int64)
                win.Fetch_and_op(None, cur, 0, 0, onesided.NO_OP) if mode != "declared" else \
                    win.Fetch_and_op(np.zeros(1, np.int64), cur, 0, 0, onesided.SUM)
                win.Flush(0)
                while True:
                    new = cur + 1
                    if kind == 4:
                        win.Compare_and_swap(new, cur, got, 0, 0)
                    else:
                        win.Rmw2(cur, new, got, 0, 0, onesided.RMW2_COMP_SWAP_EQ)
                    win.Flush(0)
                    if got[0] == cur[0]:
                        break
                    cur[0] = got[0]
            increments += 1
            win.Flush(0)
    total = sum(comm.allgather(increments))
    comm.Barrier()
    if rank == 0:
        win.Sync()
        value = np.frombuffer(win, np.int64)[0]
        assert value == total, (value, total)
        print(f"mixed ({mode}): {total} increments, int64 path {path}")
    if mode == "declared":
        try:
            win.Lock(0)
            win.Accumulate(one, 0, op=onesided.MAX)
        except onesided.OpSetError as e:
            assert "accumulate:max" in str(e), e
        else:
            raise AssertionError("an undeclared op was accepted")
        finally:
            win.Unlock(0)
    win.Free()


def check_implicit_epoch(mode: str) -> None:
    """MODE_PASSIVE_EPOCH_IMPLICIT is an exclusive epoch: it never sees the
    intermediate state rank 0 leaves inside its own exclusive-lock epochs."""
    win = Window.Allocate(8, disp_unit=8, info=harness.info(), comm=comm)
    odd, even = np.ones(1, np.int64), np.zeros(1, np.int64)
    seen = np.zeros(1, np.int64)
    zero = np.zeros(1, np.int64)
    comm.Barrier()
    if rank == 0:
        for k in range(200):
            with win.lock(1):
                odd[0] = 2 * k + 1
                win.Put(odd, 1)
                win.Flush(1)
                even[0] = 2 * k + 2
                win.Put(even, 1)
    else:
        for _ in range(200):
            win.Rmw(zero, seen, 1, 0, onesided.RMW_SUM, onesided.MODE_PASSIVE_EPOCH_IMPLICIT)
            assert seen[0] % 2 == 0, f"saw {seen[0]} from inside another rank's exclusive epoch"
    comm.Barrier()
    win.Free()


CHECKS = {"reference": check_reference, "mixed": check_mixed, "implicit_epoch": check_implicit_epoch}

if __name__ == "__main__":
    name = sys.argv[1]
    mode = sys.argv[2] if len(sys.argv) > 2 else "default"
    CHECKS[name](mode)
    comm.Barrier()
    if rank == 0:
        print(f"PASS {name} {mode}")
