"""The table across peers: the summary rows of several benchmark runs, one
run per peer MPI, side by side.

    python -m onesided.bench.peers RUN.json [RUN.json ...]

Each RUN.json is written by ``python -m onesided.bench --json RUN.json``
(``make bench-peers`` runs one job per peer). One MPI library per process,
so each peer has its own run: onesided is measured again beside each, and
only a ratio taken within one run compares like with like. Every table
prints, per peer, the peer's figure as ``median [min, max]`` over that run's
repetitions and the ratio onesided / peer of that run's medians; the
onesided column gives the range of onesided's medians over the runs. Each
run's calibration (the core-to-core ping-pong before each table) is listed
first, so a run taken on a busy machine shows.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable

from ._common import fmt_ratio, table

__all__ = ["main", "peers_text"]


def _num(x: float) -> str:
    return f"{x:.3g}"


def _cell(v: list[float] | None, unit: str) -> str:
    if v is None:
        return "n/a"
    mid, lo, hi = v
    return f"{_num(mid)} {unit} [{_num(lo)}, {_num(hi)}]"


def peer_cells(found: list[dict[str, Any] | None]) -> list[str]:
    """A table row's column pairs, one per job: the peer's figure and the
    ratio onesided / peer of that job's medians (``-`` twice where the job
    has no such summary row). Shared with bench.scale."""
    cells: list[str] = []
    for r in found:
        if r is None:
            cells += ["-", "-"]
            continue
        cells += [_cell(r["peer"], r["unit"]),
                  fmt_ratio(r["onesided"] and r["onesided"][0], r["peer"] and r["peer"][0])]
    return cells


def peers_text(runs: list[dict[str, Any]]) -> str:
    """Markdown: the calibration of each run, then one table per figure
    (in the order of the first run that has it), a column pair per run."""
    out = ["## onesided beside each peer (one job per peer; ratios = onesided / peer within one job)"]
    cal_rows = []
    for run in runs:
        cals = [f["calibration"] for f in run["figures"] if f["calibration"] is not None]
        mids = sorted(c[0] for c in cals)
        cal_rows.append([run["label"], run["peer"], run["libfabric"],
                         f"{_num(mids[0])}-{_num(mids[-1])} us" if mids else "n/a"])
    out.append("### Calibration: core-to-core ping-pong round trip, before each table of each job\n\n"
               "The range of the calibration medians over the job's tables. A job whose calibration is far above "
               "the others ran on a busy machine: compare its ratios with care.")
    out.append(table(["peer", "MPI library (osc)", "libfabric in the process", "ping-pong round trip"], cal_rows))

    titles: list[str] = []
    for run in runs:
        for f in run["figures"]:
            if f["rows"] and f["title"] not in titles:
                titles.append(f["title"])
    for title in titles:
        per_run = [next((f for f in run["figures"] if f["title"] == title), None) for run in runs]
        present = [(run, f) for run, f in zip(runs, per_run) if f is not None]
        names: list[str] = []
        for _, f in present:
            names += [r["row"] for r in f["rows"] if r["row"] not in names]
        higher = any(r["higher_is_better"] for _, f in present for r in f["rows"])
        headers = ["row", "onesided (range over jobs)"]
        for run, _ in present:
            headers += [run["label"], "ratio"]
        rows = []
        for name in names:
            found = [next((r for r in f["rows"] if r["row"] == name), None) for _, f in present]
            unit = next(r["unit"] for r in found if r is not None)
            ours = sorted(r["onesided"][0] for r in found if r is not None and r["onesided"] is not None)
            rows.append([name, f"{_num(ours[0])}-{_num(ours[-1])} {unit}" if ours else "n/a", *peer_cells(found)])
        sense = "above 1: onesided faster" if higher else "below 1: onesided faster"
        out.append(f"### {title}\n\nratio = onesided / peer, both medians from the same job ({sense}).")
        out.append(table(headers, rows))
    return "\n\n".join(out) + "\n"


def print_runs(text: Callable[[list[dict[str, Any]]], str], module: str, argv: list[str] | None) -> int:
    """The command line of this module and of bench.scale: the JSON files of
    the runs named on it, merged by ``text``, printed."""
    paths = sys.argv[1:] if argv is None else argv
    if not paths:
        print(f"usage: python -m {module} RUN.json [RUN.json ...]", file=sys.stderr)
        return 2
    runs = []
    for path in paths:
        with open(path) as f:
            runs.append(json.load(f))
    print(text(runs), end="")
    return 0


def main(argv: list[str] | None = None) -> int:
    return print_runs(peers_text, "onesided.bench.peers", argv)


if __name__ == "__main__":
    raise SystemExit(main())
