"""Window creation across rank counts and peers: the summary rows of
several ``--creation`` jobs, one job per (peer, rank count), as one table
per measure (the job's first window, later windows, Free, the first window
of each kind) with a row per kind and rank count and a column pair per peer.

    python -m onesided.bench.creation RUN.json [RUN.json ...]

Each RUN.json is written by ``mpiexec -n N python -m onesided.bench
--creation --json RUN.json --label PEER`` (``make bench-creation`` runs one
job per peer and rank count). As in the table across peers (peers.py), each
ratio is onesided / peer from the medians of one job (below 1: onesided
faster), every peer cell is ``median [min, max]`` over that job's windows,
and the onesided column gives the range of onesided's medians over the jobs
of that row: only a ratio taken within one job compares like with like.
"""

from __future__ import annotations

from typing import Any

from ._across import Jobs
from ._creation import FIRST, KINDS
from .peers import peer_cells, print_runs

__all__ = ["main", "creation_text"]

TITLE = "7. Window creation and Free"

# (table heading, [(row label suffix, summary row name)]) per measure.
MEASURES: list[tuple[str, list[tuple[str, str]]]] = [
    ("The first window of the job (Allocate), and its Free",
     [("first window", FIRST), ("its Free", "Free of the first window")]),
    ("Later windows: create, us per window", [(kind, f"{kind}: later windows") for kind in KINDS]),
    ("Later windows: Free, us per window", [(kind, f"{kind}: Free") for kind in KINDS]),
    ("The first window of each kind (after the job's first window)",
     [(kind, f"{kind}: first of its kind") for kind in KINDS]),
]


def creation_text(runs: list[dict[str, Any]]) -> str:
    """Markdown: each job's calibration, then one table per measure, a row
    per (kind, rank count) and a column pair per peer label (in the order
    first seen). Runs without the creation figure are ignored; a (peer,
    rank count) with no run reads ``-``."""
    jobs = Jobs.of(runs, TITLE)
    out = jobs.preamble("Window creation")
    for heading, rows_of in MEASURES:
        rows = []
        for suffix, name in rows_of:
            for n in jobs.ranks:
                found = jobs.rows(n, name)
                rows.append([f"{suffix}, {jobs.label(n)}", jobs.onesided_span(found, "us"), *peer_cells(found)])
        out += jobs.section(f"{TITLE}: {heading}", "row", "below 1: onesided faster", rows)
    return "\n\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    return print_runs(creation_text, "onesided.bench.creation", argv)


if __name__ == "__main__":
    raise SystemExit(main())
