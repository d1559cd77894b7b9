"""How fast one process copies 256 KiB between two places of one shared
mapping, by the virtual distance between source and destination.

Why this exists: figure 2b once showed onesided's large puts into an
``Allocate`` window at 0.86-0.93x ``MPI.Win`` (MPICH 5), and the cause was
not either library: the window that mmap happened to place 2^27 + 4 KiB
from the benchmark's buffers got the slow copy, whichever library's it was
(docs/performance.md, "Bandwidth by window kind"). On AMD cores the L1
data cache picks a line's way by a hash of linear-address bits 12-27; two
lines of one set whose addresses hash alike evict each other, and a copy
whose source and destination lie such a distance apart does so on every
line. Distances that flip only bits above 27, or a pair of bits the hash
XORs together (12 with 27, 13 with 26, 14 with 25 on the Zen family), are
the unlucky ones; the bench's buffers therefore move each repetition
(``onesided.bench._common.RovingBuffer``).

    python tools/copy_distance.py            # 256 KiB copies
    python tools/copy_distance.py 1024       # 1 MiB

Prints GB/s (1e9 B/s), median of 5 runs of 100 copies, for each distance,
twice (the second pass shows the figure belongs to the distance, not to the
moment). No MPI, no onesided: np.copyto within one ``mmap(MAP_SHARED)``.
"""

from __future__ import annotations

import mmap
import sys
import time

import numpy as np

SIZE = (int(sys.argv[1]) if len(sys.argv) > 1 else 256) << 10
SOURCE_AT = 16  # numpy's large arrays start 16 bytes into a page (malloc's header)
DISTANCES = [(1 << bit) + extra for bit in (26, 27, 28, 29) for extra in (0, 4096, 8192, 65536)]


def rate(memory: np.ndarray, at: int) -> float:
    source = memory[SOURCE_AT:SOURCE_AT + SIZE]
    destination = memory[at:at + SIZE]  # page-aligned, as a window's memory is
    for _ in range(10):
        np.copyto(destination, source)
    runs = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(100):
            np.copyto(destination, source)
        runs.append(100 * SIZE / (time.perf_counter() - t0) / 1e9)
    return sorted(runs)[2]


def main() -> None:
    span = max(DISTANCES) + SIZE
    mapping = mmap.mmap(-1, span, flags=mmap.MAP_SHARED)
    memory = np.frombuffer(mapping, np.uint8)
    memory[:] = 1  # every page present before timing
    print(f"np.copyto of {SIZE >> 10} KiB, GB/s, by the destination's distance from the source's page "
          f"(source {SOURCE_AT} B into it, destination page-aligned)")
    passes = [[rate(memory, d) for d in DISTANCES] for _ in range(2)]
    for d, first, second in zip(DISTANCES, *passes):
        bit = d.bit_length() - 1
        extra = d - (1 << bit)
        print(f"  2^{bit} + {extra:>6} B: {first:5.1f} {second:5.1f}")
    del memory
    mapping.close()


if __name__ == "__main__":
    main()
