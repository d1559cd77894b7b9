"""Scale across hosts: what a window costs as the job grows, one job per
(launcher, rank count), one table per figure, and the growth fitted per
figure.

    python -m onesided.bench.hosts job --json OUT.json --label LABEL [--libs onesided,mpi]
    python -m onesided.bench.hosts report RUN.json [RUN.json ...]

``job`` is what each rank runs (``_hosts_job.py`` says what it measures);
``report`` prints the tables. ``make bench-scale-hosts`` runs the jobs over
simulated hosts (tools/bench_scale_hosts.py) and then the report.

The fit: for each series (a launcher's library), ``y = a + b g(P)`` for
each growth g of constant, log2 P, P and P^2 (and 1/log2 P and 1/P for
figures that fall, as a rate shared by every rank does), a and b by least
squares with neither below zero; the g kept is the one with the lowest
corrected Akaike criterion, so a growth must earn its second parameter.
Beside it, the exponent of a power law fitted to the same points in
logarithms, ``y ~ P^e``. The projections to 1,024 and 16,384 ranks evaluate
the kept growth: they say what today's growth implies, not what a machine
of that size would measure (on this machine the ranks beyond its cores
share them, which alone makes a job's figures grow with P).
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


_G = {
    "constant": lambda p: 0.0,
    "log P": lambda p: math.log2(p),
    "P": lambda p: float(p),
    "P^2": lambda p: float(p) ** 2,
    "1/log P": lambda p: 1.0 / math.log2(p),
    "1/P": lambda p: 1.0 / p,
}


@dataclass(frozen=True)
class Growth:
    """``a + b * g(P)``, ``kind`` naming g (a key of ``_G``); ``exponent``
    is a power law's, ``y ~ P^exponent``, fitted to the same points."""

    kind: str
    a: float
    b: float
    exponent: float

    def at(self, p: int) -> float:
        return self.a + self.b * _G[self.kind](p)

    def text(self, unit: str) -> str:
        law = f"P^{self.exponent:.2f}"
        if self.kind == "constant":
            return f"constant: {_num(self.a)}{' ' + unit if unit else ''} ({law})"
        return f"{_num(self.a)} + {_num(self.b)} {self.kind} ({law})"


def _num(x: float) -> str:
    return f"{x:.3g}"


def _nonnegative_fit(xs: list[float], ys: list[float]) -> tuple[float, float, float]:
    """(a, b, residual sum of squares) of y = a + b x, least squares with
    a >= 0 and b >= 0 (the best point on the boundary when the free optimum
    lies outside)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx > 0 else 0.0
    a = my - b * mx
    if b < 0 or a < 0:
        sx2 = sum(x * x for x in xs)
        candidates = [(my, 0.0), (0.0, max(0.0, sum(x * y for x, y in zip(xs, ys)) / sx2) if sx2 else 0.0)]
        a, b = min(candidates, key=lambda ab: sum((y - ab[0] - ab[1] * x) ** 2 for x, y in zip(xs, ys)))
    return a, b, sum((y - a - b * x) ** 2 for x, y in zip(xs, ys))


def _power_law(ps: list[int], ys: list[float]) -> float:
    lx = [math.log(p) for p in ps]
    ly = [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    sxx = sum((x - mx) ** 2 for x in lx)
    return sum((x - mx) * (y - my) for x, y in zip(lx, ly)) / sxx if sxx > 0 else 0.0


def fit_growth(ps: list[int], ys: list[float]) -> Growth | None:
    """The growth that the points support best (corrected AIC); None with
    fewer than five points (with four, the criterion's correction for two
    parameters is so large that a constant wins whatever the points do), a
    point at or below zero, or a rank count below 2."""
    n = len(ps)
    if n < 5 or min(ys) <= 0 or min(ps) < 2:
        return None
    best: tuple[float, Growth] | None = None
    exponent = _power_law(ps, ys)
    for kind, g in _G.items():
        if kind == "constant":
            a, b, rss, k = sum(ys) / n, 0.0, sum((y - sum(ys) / n) ** 2 for y in ys), 1
        else:
            a, b, rss = _nonnegative_fit([g(p) for p in ps], ys)
            k = 2
        aicc = n * math.log(max(rss / n, 1e-300)) + 2 * k + 2 * k * (k + 1) / (n - k - 1)
        if best is None or aicc < best[0]:
            best = (aicc, Growth(kind, a, b, exponent))
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
