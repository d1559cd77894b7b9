"""What one call from Python costs, in one process (a world of one, the
shared-memory path, everything complete in its call): Put, Fetch_and_op,
Accumulate(op=...), Lock + Unlock and Put_notify, each the best of
``--repeat`` runs of ``--number`` calls (``timeit``), in ns per call.

This is the cost of the road from the call to the core (argument matching,
recognition, the core call), not of moving data: the figure a change to the
bindings must keep (docs/performance.md, "The road from a call"). Run it
twice, alternating two builds, to compare them on the same machine::

    python -m onesided.bench.calls
    PYTHONPATH=/path/to/other/build python -m onesided.bench.calls
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np

import onesided

STATEMENTS = {
    "Put": "win.Put(o, 0)",
    "Fetch_and_op": "win.Fetch_and_op(o, r, 0)",
    "Accumulate(op=...)": "win.Accumulate(o, 0, op=SUM)",
    "Put_notify": "win.Put_notify(o, 0, 0, 0)",
}


def measure(number: int, repeat: int) -> dict[str, float]:
    """ns per call of each row."""
    # Notification counters make the cross-memory path hold operations;
    # on the shared-memory path (Allocate, one host) every call still
    # completes in its call, as without them.
    win = onesided.Window.Allocate(64, disp_unit=8, info={"onesided_notifications": "1"})
    try:
        scope = {"win": win, "o": np.ones(1, np.int64), "r": np.zeros(1, np.int64), "SUM": onesided.SUM}
        out: dict[str, float] = {}
        win.Lock_all()
        for name, statement in STATEMENTS.items():
            out[name] = min(timeit.repeat(statement, globals=scope, number=number, repeat=repeat)) / number * 1e9
        win.Unlock_all()
        out["Lock+Unlock"] = min(timeit.repeat("win.Lock(0); win.Unlock(0)", globals=scope, number=number,
                                               repeat=repeat)) / number * 1e9
        return out
    finally:
        win.Free()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m onesided.bench.calls", description=__doc__.split("\n\n")[0])
    parser.add_argument("--number", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    for name, ns in measure(args.number, args.repeat).items():
        print(f"{name:20s} {ns:7.1f} ns")


if __name__ == "__main__":
    main()
