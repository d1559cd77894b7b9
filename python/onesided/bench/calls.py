"""What one call from Python costs, in one process (a world of one, the
shared-memory path, everything complete in its call): Put, Fetch_and_op,
Accumulate(op=...), Put_notify, each 8-byte op followed by Flush, and Lock +
Unlock, each the best of ``--repeat`` runs of ``--number`` calls
(``timeit``), in ns per call.

Beside each row, in the same run, the floor: the same statement with every
window call replaced by a C function that does nothing
(``_core.call_floor``: METH_FASTCALL, bound to the window as its fast
entries are) called with the same arguments, and the row as a multiple of
it. The floor is what CPython charges for calling C at all; the multiple is
what onesided adds on top (its aim: 2x).

This is the cost of the road from the call to the core (argument matching,
recognition, the core call), not of moving data: the figure a change to the
bindings must keep (docs/performance.md, "The road from a call"). Run it
twice, alternating two builds, to compare them on the same machine::

    python -m onesided.bench.calls
    PYTHONPATH=/path/to/other/build python -m onesided.bench.calls
"""

from __future__ import annotations

import argparse
import re
import timeit

import numpy as np

import onesided
from onesided import _core

STATEMENTS = {
    "Put": "win.Put(o, 0)",
    "Fetch_and_op": "win.Fetch_and_op(o, r, 0)",
    "Accumulate(op=...)": "win.Accumulate(o, 0, op=SUM)",
    "Put_notify": "win.Put_notify(o, 0, 0, 0)",
    "Put + Flush": "win.Put(o, 0); win.Flush(0)",
    "Fetch_and_op + Flush": "win.Fetch_and_op(o, r, 0); win.Flush(0)",
}
LOCKED = {"Lock+Unlock": "win.Lock(0); win.Unlock(0)"}


def floor_of(statement: str) -> str:
    """``statement`` with every window call made to the call floor, with
    the same arguments."""
    return re.sub(r"\bwin\.\w+\(", "floor(", statement)


def measure(number: int, repeat: int) -> dict[str, tuple[float, float]]:
    """ns per call of each row, and of its floor."""
    # Notification counters make the cross-memory path hold operations;
    # on the shared-memory path (Allocate, one host) every call still
    # completes in its call, as without them.
    win = onesided.Window.Allocate(64, disp_unit=8, info={"onesided_notifications": "1"})
    try:
        scope = {"win": win, "o": np.ones(1, np.int64), "r": np.zeros(1, np.int64), "SUM": onesided.SUM,
                 "floor": _core.call_floor(win)}

        def ns(statement: str) -> float:
            return min(timeit.repeat(statement, globals=scope, number=number, repeat=repeat)) / number * 1e9

        out: dict[str, tuple[float, float]] = {}
        win.Lock_all()
        for name, statement in STATEMENTS.items():
            out[name] = (ns(statement), ns(floor_of(statement)))
        win.Unlock_all()
        for name, statement in LOCKED.items():
            out[name] = (ns(statement), ns(floor_of(statement)))
        return out
    finally:
        win.Free()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m onesided.bench.calls", description=__doc__.split("\n\n")[0])
    parser.add_argument("--number", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"{'call':22s} {'ns':>7s} {'floor ns':>9s} {'x floor':>8s}")
    for name, (ns, floor) in measure(args.number, args.repeat).items():
        print(f"{name:22s} {ns:7.1f} {floor:9.1f} {ns / floor:7.2f}x")


if __name__ == "__main__":
    main()
