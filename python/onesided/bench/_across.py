"""Tables across rank counts: the summary rows of one figure from several
``--json`` jobs, one job per (peer, rank count), as the table-across-rank-
counts commands (``scale.py``, ``creation.py``) print them.

Each job is one mpiexec run of one peer at one rank count, so a ratio is
only ever taken within one job (onesided's and the peer's medians measured
side by side); the onesided column gives the range of onesided's medians
over the jobs of a row, and a rank count above the host's cores is marked
oversubscribed (its ranks take turns on the cores).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._common import table
from .peers import _cell, _num

__all__ = ["Jobs", "ranks_label"]


def ranks_label(ranks: int, cores: int | None) -> str:
    """``N ranks``, and how oversubscribed when N exceeds the host's cores."""
    if cores and ranks > cores:
        return f"{ranks} ranks (oversubscribed: {ranks / cores:.3g} per core)"
    return f"{ranks} ranks"


@dataclass(frozen=True)
class Jobs:
    """One figure's jobs: peer labels in the order first seen, rank counts
    sorted, and the figure of each (label, ranks) that has a job."""

    labels: list[str]
    ranks: list[int]
    cores: dict[int, int | None]
    figures: dict[tuple[str, int], dict[str, Any]]

    @classmethod
    def of(cls, runs: list[dict[str, Any]], title: str) -> "Jobs":
        """The jobs among `runs` whose figures include the one whose title
        starts with `title` (runs without it are ignored)."""
        found = [(run, next((f for f in run["figures"] if f["title"].startswith(title)), None)) for run in runs]
        found = [(run, f) for run, f in found if f is not None]
        return cls(labels=list(dict.fromkeys(run["label"] for run, _ in found)),
                   ranks=sorted({run["ranks"] for run, _ in found}),
                   cores={run["ranks"]: run.get("cores") for run, _ in found},
                   figures={(run["label"], run["ranks"]): f for run, f in found})

    def label(self, ranks: int) -> str:
        return ranks_label(ranks, self.cores[ranks])

    def row_names(self) -> list[str]:
        """Every summary row name, in the order the jobs first give them."""
        names: list[str] = []
        for f in self.figures.values():
            names += [r["row"] for r in f["rows"] if r["row"] not in names]
        return names

    def preamble(self, subject: str) -> list[str]:
        """The heading, the oversubscription note and each job's calibration
        table, as Markdown blocks."""
        out = [f"## {subject} across rank counts (one job per peer and rank count; ratios = onesided / peer "
               "within one job)"]
        host = sorted({c for c in self.cores.values() if c})
        if host:
            out.append(f"The host has {', '.join(map(str, host))} cores: jobs with more ranks are oversubscribed, "
                       "their ranks take turns on the cores and every figure includes time a rank waited for one.")
        rows = []
        for n in self.ranks:
            row = [self.label(n)]
            for peer in self.labels:
                f = self.figures.get((peer, n))
                row.append(_cell(f["calibration"], "us") if f and f["calibration"] else "-")
            rows.append(row)
        out.append("### Calibration: core-to-core ping-pong round trip before each job's table\n\n"
                   "A job whose calibration is far above the others ran on a busy machine: compare its ratios "
                   "with care.")
        out.append(table(["job", *self.labels], rows))
        return out

    def headers(self, first: str) -> list[str]:
        """A table's header: `first`, onesided's range, then a (figure,
        ratio) pair per peer label."""
        out = [first, "onesided (range over jobs)"]
        for label in self.labels:
            out += [label, "ratio"]
        return out

    def section(self, heading: str, first: str, sense: str, rows: list[list[str]]) -> list[str]:
        """One measure's heading and table (first column `first`), as
        Markdown blocks; `sense` says which side of 1 favours onesided."""
        return [f"### {heading}\n\nratio = onesided / peer, both medians from the same job ({sense}).",
                table(self.headers(first), rows)]

    def rows(self, ranks: int, name: str) -> list[dict[str, Any] | None]:
        """The summary row `name` of each peer's job at `ranks` (None: no job
        or no such row), in label order."""
        return [next((r for r in self.figures[(peer, ranks)]["rows"] if r["row"] == name), None)
                if (peer, ranks) in self.figures else None for peer in self.labels]

    @staticmethod
    def onesided_span(found: list[dict[str, Any] | None], unit: str) -> str:
        """The range of onesided's medians over the jobs of one row."""
        ours = sorted(r["onesided"][0] for r in found if r is not None and r["onesided"] is not None)
        if not ours:
            return "-"
        span = _num(ours[0]) if ours[0] == ours[-1] else f"{_num(ours[0])}-{_num(ours[-1])}"
        return f"{span} {unit}"
