"""Scale across hosts: what a window costs as the job grows, one job per
(launcher, rank count), one table per figure, and the growth fitted per
figure.

    python -m onesided.bench.hosts job --json OUT.json --label LABEL [--libs onesided,mpi]
    python -m onesided.bench.hosts report RUN.json [RUN.json ...]

``job`` is what each rank runs (``_hosts_job.py`` says what it measures);
``report`` prints the tables. ``make bench-scale-hosts`` runs the jobs over
simulated hosts (tools/bench_scale_hosts.py) and then the report.

The fit: for each series (a launcher's library), ``y = a + b g(P)`` with g
one of ``1`` (constant), ``log2 P`` and ``P``, by least squares on relative
residuals (each point weighted by ``1/y^2``, so the small rank counts count
as much as the large ones); the model kept is the one with the lowest
corrected Akaike criterion, so a second parameter must earn its place. The
projections to 1,024 and 16,384 ranks evaluate the kept model: they say
what today's growth implies, not what a machine of that size would measure.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from typing import Any

from ._common import table
from ._hosts_job import FIGURES, run_job

__all__ = ["Growth", "fit_growth", "main", "report_text"]

PROJECT_TO = (1024, 16384)
LIB_NAMES = {"onesided": "onesided", "mpi": "MPI.Win"}


@dataclass(frozen=True)
class Growth:
    """``a + b * g(P)``; ``kind`` names g: "constant", "log P" or "P"."""

    kind: str
    a: float
    b: float

    def at(self, p: int) -> float:
        return self.a + self.b * _G[self.kind](p)

    def text(self, unit: str) -> str:
        if self.kind == "constant":
            return f"constant ({_num(self.a)} {unit})".rstrip()
        term = "log2 P" if self.kind == "log P" else "P"
        return f"~ {self.kind}: {_num(self.a)} + {_num(self.b)} {term}"


_G = {"constant": lambda p: 0.0, "log P": lambda p: math.log2(p), "P": lambda p: float(p)}


def _num(x: float) -> str:
    return f"{x:.3g}"


def _weighted_fit(ps: list[int], ys: list[float], g: Any) -> tuple[float, float, float]:
    """(a, b, weighted residual sum of squares) of y = a + b g(P) with
    weights 1/y^2; b = 0 when g is constant."""
    w = [1.0 / (y * y) if y else 1.0 for y in ys]
    xs = [g(p) for p in ps]
    sw = sum(w)
    mx = sum(wi * x for wi, x in zip(w, xs)) / sw
    my = sum(wi * y for wi, y in zip(w, ys)) / sw
    sxx = sum(wi * (x - mx) ** 2 for wi, x in zip(w, xs))
    b = sum(wi * (x - mx) * (y - my) for wi, x, y in zip(w, xs, ys)) / sxx if sxx > 0 else 0.0
    a = my - b * mx
    rss = sum(wi * (y - a - b * x) ** 2 for wi, x, y in zip(w, xs, ys))
    return a, b, rss


def fit_growth(ps: list[int], ys: list[float]) -> Growth | None:
    """The model of the three that the points support best (corrected AIC
    on relative residuals); None with fewer than three points."""
    n = len(ps)
    if n < 3:
        return None
    best: tuple[float, Growth] | None = None
    for kind, g in _G.items():
        k = 1 if kind == "constant" else 2
        a, b, rss = _weighted_fit(ps, ys, g)
        if n - k - 1 <= 0:
            continue
        aicc = n * math.log(max(rss, 1e-300) / n) + 2 * k + 2 * k * (k + 1) / (n - k - 1)
        if best is None or aicc < best[0]:
            best = (aicc, Growth(kind, a, b))
    return best[1] if best else None


def _series(runs: list[dict[str, Any]]) -> dict[str, dict[int, dict[str, Any]]]:
    """Per series name ("LABEL: LIB"), its figures per rank count."""
    out: dict[str, dict[int, dict[str, Any]]] = {}
    for run in runs:
        for lib, figures in run["results"].items():
            out.setdefault(f"{run['label']}: {LIB_NAMES.get(lib, lib)}", {})[run["ranks"]] = figures
    return out


def report_text(runs: list[dict[str, Any]]) -> str:
    """Markdown: one table per figure, a row per rank count and a column per
    series, then the growth kept for each series and its projections."""
    series = _series(runs)
    names = list(series)
    ranks = sorted({run["ranks"] for run in runs})
    hosts = {run["ranks"]: run["hosts"] for run in runs}
    cores = max((run.get("cores") or 0) for run in runs) if runs else 0
    out = [f"## Scale across hosts ({len(runs)} jobs)",
           f"Every simulated host shares this machine's {cores} cores: from {cores + 1} ranks on, the ranks take "
           "turns on the cores (oversubscribed), and every figure includes time a rank waited for one."]
    bad = [f"{name} at {p} ranks" for name in names for p, f in series[name].items() if not f.get("counter_ok", True)]
    if bad:
        out.append("**Counter MISMATCH** (the final counter is not every op issued): " + ", ".join(bad))
    for key, (title, unit, _) in FIGURES.items():
        rows = []
        for p in ranks:
            row = [f"{p} ({hosts[p]} hosts)"]
            for name in names:
                f = series[name].get(p)
                row.append(_num(f[key]) if f and key in f else "-")
            rows.append(row)
        growth_row, projections = ["growth"], {p: [f"projected {p}"] for p in PROJECT_TO}
        for name in names:
            pts = sorted((p, f[key]) for p, f in series[name].items() if key in f)
            g = fit_growth([p for p, _ in pts], [y for _, y in pts])
            growth_row.append(g.text(unit) if g else "-")
            for p in PROJECT_TO:
                projections[p].append(_num(g.at(p)) if g else "-")
        rows += [growth_row, *projections.values()]
        out.append(f"### {title}" + (f" ({unit})" if unit else ""))
        out.append(table(["ranks", *names], rows))
    return "\n\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m onesided.bench.hosts", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    job = sub.add_parser("job", help="measure (every rank runs this)")
    job.add_argument("--json", required=True, help="where rank 0 writes the figures")
    job.add_argument("--label", required=True, help="the launcher, as the report names it")
    job.add_argument("--libs", default="onesided", help="comma-separated: onesided, mpi (mpi4py's MPI.Win)")
    job.add_argument("--reps", type=int, default=5)
    job.add_argument("--seconds", type=float, default=1.0, help="the counter's duration")
    rep = sub.add_parser("report", help="print the tables of finished jobs")
    rep.add_argument("runs", nargs="+")
    args = parser.parse_args(argv)
    if args.command == "job":
        run_job(args.json, args.label, args.libs.split(","), args.reps, args.seconds)
        return 0
    runs = []
    for path in args.runs:
        with open(path) as f:
            runs.append(json.load(f))
    print(report_text(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
