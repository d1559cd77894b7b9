"""Timing loops, barriers, progress lines and markdown tables shared by the figures."""

from __future__ import annotations

import math
import statistics
import sys
import time
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any, Callable, Sequence

import numpy as np

Call = tuple[Callable[..., Any], tuple[Any, ...]]  # a bound method and its positional arguments


@dataclass
class Settings:
    """How long each figure runs; --quick shrinks every count."""

    quick: bool
    iters: int  # latency: ops (each with a flush) per repetition
    reps: int  # repetitions; every figure is their median, printed with their min and max
    bw_budget: int  # bandwidth: bytes moved per repetition (at least one window)
    bw_max_loops: int  # bandwidth: cap on windows per repetition for small sizes
    window: int = 64  # bandwidth: ops per flush (OSU put_bw style)
    rate_batch: int = 256  # message rate: ops per flush
    rate_batches: int = 200  # message rate: flushes per repetition
    contended_seconds: float = 0.5  # contended counter: seconds of fetch_and_ops per repetition
    sizes: list[int] = field(default_factory=list)

    @classmethod
    def make(cls, quick: bool, iters: int | None, reps: int | None) -> "Settings":
        if quick:
            s = cls(True, iters or 300, reps or 5, bw_budget=16 << 20, bw_max_loops=40,
                    rate_batches=40, contended_seconds=0.05)
            # 8 B, 32 B, ..., 2 MiB (powers of 4 from 8 B), then 4 MiB
            s.sizes = [8 << (2 * k) for k in range(10)] + [4 << 20]
        else:
            s = cls(False, iters or 2000, reps or 15, bw_budget=64 << 20, bw_max_loops=100, contended_seconds=0.3)
            s.sizes = [8 << k for k in range(20)]  # 8 B ... 4 MiB, powers of 2
        return s


class Spread(float):
    """A figure over repetitions: a float equal to the median (so arithmetic,
    ratios and charts use the median) that also keeps the smallest and the
    largest repetition as ``lo`` and ``hi``."""

    lo: float
    hi: float

    def __new__(cls, mid: float, lo: float, hi: float) -> "Spread":
        obj = super().__new__(cls, mid)
        obj.lo, obj.hi = lo, hi
        return obj

    @classmethod
    def of(cls, samples: Sequence[float]) -> "Spread":
        """Median, min and max of ``samples`` (at least one)."""
        return cls(statistics.median(samples), min(samples), max(samples))

    def map(self, fn: Callable[[float], float]) -> "Spread":
        """``fn`` of each of min, median and max (re-sorted: a decreasing
        ``fn``, as seconds to rate, swaps min and max)."""
        lo, mid, hi = sorted((fn(self.lo), fn(float(self)), fn(self.hi)))
        return Spread(mid, lo, hi)


def fmt_spread(v: float | None, fmt: Callable[[float], str], unit: str = "") -> str:
    """``median unit [min, max]`` for a Spread, ``value unit`` for a plain
    float, ``n/a`` for None; ``fmt`` formats each number."""
    if v is None:
        return "n/a"
    text = fmt(float(v)) + (f" {unit}" if unit else "")
    if isinstance(v, Spread):
        text += f" [{fmt(v.lo)}, {fmt(v.hi)}]"
    return text


def fmt_us(v: float | None) -> str:
    """Microseconds, three significant digits, with the spread if any."""
    return fmt_spread(v, lambda x: f"{x:.3g}", "us")


# One row of a run's summary, for the table across peers (peers.py):
# (row name, unit, onesided's figure, the peer's figure, whether higher is better).
SummaryRow = tuple[str, str, "float | None", "float | None", bool]


@dataclass(frozen=True)
class Figure:
    """One 2-rank figure of the benchmark, as its list in ``onesided.bench``
    registers it. ``measure(comm, MPI, onesided, settings, progress)`` is
    collective and returns its result on rank 0 (None elsewhere);
    ``text(result, settings, peer)`` is its markdown, opening with a
    ``### N. title`` heading; ``summary(result)``, if any, gives the rows
    that the table across peers repeats; ``ok(result)``, if any, checks
    what was measured (the job fails, saying ``mismatch``, when it does
    not hold)."""

    key: str
    measure: Callable[..., Any]
    text: Callable[[Any, "Settings", str], str]
    summary: Callable[[Any], list[SummaryRow]] | None = None
    full_only: bool = False  # skipped with --quick
    ok: Callable[[Any], bool] | None = None
    mismatch: str = ""


class RovingBuffer:
    """A byte buffer for the bandwidth figures whose start moves by
    ``STEP`` (37 pages) with each repetition, through ``PLACES`` places, the
    same for every column of the repetition.

    Why: on this host's AMD cores a copy runs 20-30% slower when its source
    and destination lie certain virtual distances apart (2^27 + 4 KiB,
    2^28, 2^29 measured; ``tools/copy_distance.py``): the L1 data cache
    picks a line's way by a hash of linear-address bits 12-27 (a
    "utag", AMD's optimization guide for family 17h; the hash's bits
    reverse-engineered by Lipp et al., "Take A Way", 2020), and a source
    and a destination line in one set with one hash evict each other on
    every access. Where each library's window lands from the benchmark's
    buffers is an accident of mmap's order (figure 2b's 64 MiB buffers put
    one library's window 128 MiB + 4 KiB from them, whichever was mapped
    second), so a buffer at one place would hand one column the slow copy
    for a whole figure. Moved each repetition, a bad distance hits at most
    one place in ``PLACES`` of every column, and the median does not see
    it."""

    STEP = 37 * 4096
    PLACES = 8

    def __init__(self, size: int, fill: int) -> None:
        self._pool = np.full(size + self.STEP * (self.PLACES - 1), fill, dtype=np.uint8)

    def at(self, rep: int, size: int) -> np.ndarray:
        """The first ``size`` bytes from repetition ``rep``'s place."""
        start = (rep % self.PLACES) * self.STEP
        return self._pool[start:start + size]


class Progress:
    """Progress lines on rank 0's stderr, with the time since the start."""

    def __init__(self, rank: int) -> None:
        self.rank = rank
        self.t0 = time.perf_counter()

    def __call__(self, message: str) -> None:
        if self.rank == 0:
            print(f"[bench {time.perf_counter() - self.t0:6.1f} s] {message}", file=sys.stderr, flush=True)


def idle_barrier(comm: Any) -> None:
    """A barrier that leaves the CPU to progress threads while it waits (how
    a onesided target waits: on 2 cores a rank spinning in MPI would starve
    the progress thread of the libfabric path)."""
    request = comm.Ibarrier()
    while not request.Test():
        time.sleep(0.0002)


def latency_us(call: Call, flush: Callable[[int], None], target: int, iters: int) -> float:
    """Microseconds per (op + flush(target)) over ``iters`` ops, after a
    warm-up of a tenth as many."""
    fn, args = call
    for _ in repeat(None, max(10, iters // 10)):
        fn(*args)
        flush(target)
    t0 = time.perf_counter()
    for _ in repeat(None, iters):
        fn(*args)
        flush(target)
    return (time.perf_counter() - t0) / iters * 1e6


def batch_seconds(call: Call, flush: Callable[[int], None] | None, target: int, batch: int, batches: int) -> float:
    """Seconds per batch of ``batch`` ops followed by one flush (no flush
    when ``flush`` is None: the memcpy reference), over ``batches`` batches,
    after a warm-up of a tenth as many (at least one)."""
    fn, args = call

    def run(n: int) -> None:
        for _ in repeat(None, n):
            for _ in repeat(None, batch):
                fn(*args)
            if flush is not None:
                flush(target)

    run(max(1, batches // 10))
    t0 = time.perf_counter()
    run(batches)
    return (time.perf_counter() - t0) / batches


def fmt_size(n: int) -> str:
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def fmt_num(x: float) -> str:
    """Four significant digits, never rounded to zero; with the spread if ``x`` is a Spread."""
    return fmt_spread(x, lambda v: f"{v:.4g}")


def fmt_rate(ops_per_s: float) -> str:
    """Millions of ops per second, with the spread if ``ops_per_s`` is a Spread."""
    return fmt_spread(ops_per_s, lambda x: f"{x / 1e6:.4g}", "Mops/s")


def fmt_ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or not math.isfinite(a) or not math.isfinite(b) or b <= 0:
        return "n/a"
    r = a / b
    return f"{r:.2f}" if r >= 0.1 else f"{r:.2g}"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A markdown table, padded for the terminal; the first column is left-aligned."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = ["| " + " | ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(headers, widths)))
             + " |",
             "|" + "|".join(("-" * (w + 1) + ":") if i else ("-" * (w + 2)) for i, w in enumerate(widths)) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                       for i, (c, w) in enumerate(zip(r, widths))) + " |")
    return "\n".join(lines)


def heading(title: str, *notes: str) -> str:
    """A markdown heading and note lines, each a paragraph of its own."""
    return "\n\n".join([f"### {title}", *notes]) + "\n"
