"""The contended counter across rank counts: the summary rows of several
``--contended`` jobs, one job per (peer, rank count), as one table per
figure with a row per rank count and a column pair per peer.

    python -m onesided.bench.scale RUN.json [RUN.json ...]

Each RUN.json is written by ``mpiexec -n N python -m onesided.bench
--contended --json RUN.json --label PEER`` (``make bench-scale`` runs one
job per peer and rank count). As in the table across peers (peers.py), each
ratio is onesided / peer from the medians of one job, every peer cell is
``median [min, max]`` over that job's repetitions, and the onesided column
gives the range of onesided's medians over the jobs of that rank count:
only a ratio taken within one job compares like with like. A rank count
above the host's cores is marked oversubscribed: its ranks take turns on
the cores.
"""

from __future__ import annotations

from typing import Any

from ._across import Jobs
from .peers import peer_cells, print_runs

__all__ = ["main", "scale_text"]

TITLE = "4. Contended counter"


def scale_text(runs: list[dict[str, Any]]) -> str:
    """Markdown: each job's calibration, then one table per summary row of
    the contended counter (in the order of the first run), a row per rank
    count and a column pair per peer label (in the order first seen).
    Runs without the contended-counter figure are ignored; a (peer, rank
    count) with no run reads ``-``."""
    jobs = Jobs.of(runs, TITLE)
    out = jobs.preamble("Contended counter")
    for name in jobs.row_names():
        rows = []
        for n in jobs.ranks:
            found = jobs.rows(n, name)
            unit = next((r["unit"] for r in found if r is not None), "")
            rows.append([jobs.label(n), jobs.onesided_span(found, unit), *peer_cells(found)])
        out += jobs.section(f"{TITLE}: {name}", "ranks", "above 1: onesided faster", rows)
    return "\n\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    return print_runs(scale_text, "onesided.bench.scale", argv)


if __name__ == "__main__":
    raise SystemExit(main())
