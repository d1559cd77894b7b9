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

from ._common import table
from .peers import _cell, _num, peer_cells, print_runs

__all__ = ["main", "scale_text"]

TITLE = "4. Contended counter"


def _figure(run: dict[str, Any]) -> dict[str, Any] | None:
    return next((f for f in run["figures"] if f["title"].startswith(TITLE)), None)


def _ranks_label(ranks: int, cores: int | None) -> str:
    if cores and ranks > cores:
        return f"{ranks} ranks (oversubscribed: {ranks / cores:.3g} per core)"
    return f"{ranks} ranks"


def scale_text(runs: list[dict[str, Any]]) -> str:
    """Markdown: each job's calibration, then one table per summary row of
    the contended counter (in the order of the first run), a row per rank
    count and a column pair per peer label (in the order first seen).
    Runs without the contended-counter figure are ignored; a (peer, rank
    count) with no run reads ``-``."""
    runs = [run for run in runs if _figure(run) is not None]
    labels = list(dict.fromkeys(run["label"] for run in runs))
    ranks = sorted({run["ranks"] for run in runs})
    cores = {run["ranks"]: run.get("cores") for run in runs}
    job = {(run["label"], run["ranks"]): _figure(run) for run in runs}
    out = ["## Contended counter across rank counts (one job per peer and rank count; ratios = onesided / peer "
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

    names: list[str] = []
    for f in job.values():
        names += [r["row"] for r in f["rows"] if r["row"] not in names]
    for name in names:
        headers = ["ranks", "onesided (range over jobs)"]
        for label in labels:
            headers += [label, "ratio"]
        rows = []
        for n in ranks:
            found = {label: next((r for r in job[(label, n)]["rows"] if r["row"] == name), None)
                     if (label, n) in job else None for label in labels}
            unit = next((r["unit"] for r in found.values() if r is not None), "")
            ours = sorted(r["onesided"][0] for r in found.values() if r is not None and r["onesided"] is not None)
            span = _num(ours[0]) if ours and ours[0] == ours[-1] else ours and f"{_num(ours[0])}-{_num(ours[-1])}"
            rows.append([_ranks_label(n, cores[n]), f"{span} {unit}" if ours else "-",
                         *peer_cells(list(found.values()))])
        out.append(f"### {TITLE}: {name}\n\nratio = onesided / peer, both medians from the same job "
                   "(above 1: onesided faster).")
        out.append(table(headers, rows))
    return "\n\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    return print_runs(scale_text, "onesided.bench.scale", argv)


if __name__ == "__main__":
    raise SystemExit(main())
