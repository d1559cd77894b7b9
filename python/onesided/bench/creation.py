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

from ._common import table
from ._creation import FIRST, KINDS
from .peers import _cell, _num, peer_cells, print_runs
from .scale import _ranks_label

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


def _figure(run: dict[str, Any]) -> dict[str, Any] | None:
    return next((f for f in run["figures"] if f["title"].startswith(TITLE)), None)


def creation_text(runs: list[dict[str, Any]]) -> str:
    """Markdown: each job's calibration, then one table per measure, a row
    per (kind, rank count) and a column pair per peer label (in the order
    first seen). Runs without the creation figure are ignored; a (peer,
    rank count) with no run reads ``-``."""
    runs = [run for run in runs if _figure(run) is not None]
    labels = list(dict.fromkeys(run["label"] for run in runs))
    ranks = sorted({run["ranks"] for run in runs})
    cores = {run["ranks"]: run.get("cores") for run in runs}
    job = {(run["label"], run["ranks"]): _figure(run) for run in runs}
    out = ["## Window creation across rank counts (one job per peer and rank count; ratios = onesided / peer "
           "within one job)"]
    host = sorted({c for c in cores.values() if c})
    if host:
        out.append(f"The host has {', '.join(map(str, host))} cores: jobs with more ranks are oversubscribed, their "
                   "ranks take turns on the cores and every figure includes time a rank waited for one.")
    cal_rows = []
    for n in ranks:
        row = [_ranks_label(n, cores[n])]
        for label in labels:
            f = job.get((label, n))
            row.append(_cell(f["calibration"], "us") if f and f["calibration"] else "-")
        cal_rows.append(row)
    out.append("### Calibration: core-to-core ping-pong round trip before each job's table\n\n"
               "A job whose calibration is far above the others ran on a busy machine: compare its ratios with care.")
    out.append(table(["job", *labels], cal_rows))
    for heading, rows_of in MEASURES:
        headers = ["row", "onesided (range over jobs)"]
        for label in labels:
            headers += [label, "ratio"]
        rows = []
        for suffix, name in rows_of:
            for n in ranks:
                found = {label: next((r for r in job[(label, n)]["rows"] if r["row"] == name), None)
                         if (label, n) in job else None for label in labels}
                ours = sorted(r["onesided"][0] for r in found.values() if r is not None and r["onesided"] is not None)
                span = _num(ours[0]) if ours and ours[0] == ours[-1] else ours and f"{_num(ours[0])}-{_num(ours[-1])}"
                rows.append([f"{suffix}, {_ranks_label(n, cores[n])}", f"{span} us" if ours else "-", *peer_cells(list(found.values()))])
        out.append(f"### {TITLE}: {heading}\n\nratio = onesided / peer, both medians from the same job "
                   "(below 1: onesided faster).")
        out.append(table(headers, rows))
    return "\n\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    return print_runs(creation_text, "onesided.bench.creation", argv)


if __name__ == "__main__":
    raise SystemExit(main())
