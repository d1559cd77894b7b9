"""The timing loop the measuring tools share: a call + Flush, timed one by
one (the tools print medians and spreads from the sorted list)."""

import time
from collections.abc import Callable
from typing import Any


def call_and_flush_us(call: Callable[[], Any], win: Any, target: int, reps: int) -> list[float]:
    """Microseconds of each of ``reps`` rounds of ``call()`` + ``win.Flush(target)``, sorted."""
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        call()
        win.Flush(target)
        times.append((time.perf_counter() - t) * 1e6)
    return sorted(times)
