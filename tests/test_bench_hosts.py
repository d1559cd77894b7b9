"""The scale-across-hosts bench (issue 26, item 3): the growth fit and the
report, and one real job of the bench under the launcher on one host.

Shape and exactness only, never speed: the fit recognises a constant, a
log P and a linear series it is given exactly, the report has a row per
rank count and the projections, and a real job writes every figure with
the counter exact.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from onesided.bench._hosts_job import FIGURES
from onesided.bench.hosts import fit_growth, report_text

PS = [2, 4, 8, 16, 32, 64]


@pytest.mark.parametrize(
    "kind, y, exponent",
    [
        ("constant", lambda p: 5.0, 0.0),
        ("log P", lambda p: 3.0 + 2.0 * math.log2(p), None),
        ("P", lambda p: 0.5 * p, 1.0),
        ("P", lambda p: 9.0 + 2.0 * p, None),
        ("P^2", lambda p: 0.01 * p * p, 2.0),
        ("1/P", lambda p: 1e4 / p, -1.0),
    ],
)
def test_fit_finds_the_growth_it_is_given(kind: str, y, exponent: float | None) -> None:
    # A little relative noise, so the fits have residuals to compare.
    noise = [1.0, 1.02, 0.98, 1.01, 0.99, 1.0]
    g = fit_growth(PS, [y(p) * e for p, e in zip(PS, noise)])
    assert g is not None and g.kind == kind
    assert g.at(1024) == pytest.approx(y(1024), rel=0.05)
    if exponent is not None:
        assert g.exponent == pytest.approx(exponent, abs=0.05)


def test_measured_series_get_their_growth() -> None:
    """Two series measured once: a Free time from 0.4 ms at 2 ranks to 163 ms
    at 64 grows faster than P (a fit weighing relative residuals had called
    it a constant near its smallest value), and sockets per rank, 9 + 2 P,
    are linear (a one-parameter fit without the offset had called them
    log P)."""
    free = fit_growth(PS, [0.367, 0.582, 5.22, 9.75, 50.4, 163.0])
    assert free is not None and free.kind in ("P", "P^2") and free.exponent > 1
    sockets = fit_growth(PS, [13.0, 17.0, 25.0, 40.0, 70.0, 130.0])
    assert sockets is not None and sockets.kind == "P" and sockets.b == pytest.approx(1.9, rel=0.05)


def test_fit_needs_five_positive_points() -> None:
    assert fit_growth([2, 4, 8, 16], [1.0, 2.0, 3.0, 4.0]) is None
    assert fit_growth([2, 4, 8, 16, 32], [1.0, 0.0, 2.0, 3.0, 4.0]) is None


def test_report_rows_and_projections() -> None:
    runs = [{"label": "launcher", "ranks": p, "hosts": min(p, 8), "cores": 2,
             "results": {"onesided": {**{k: 1.0 + p for k in FIGURES}, "counter_ok": True}}} for p in PS]
    text = report_text(runs)
    for title, _, _ in FIGURES.values():
        assert f"### {title}" in text
    assert "| 64 (8 hosts)" in text and "projected 16384" in text and " P (P^" in text
    assert "MISMATCH" not in text
    runs[0]["results"]["onesided"]["counter_ok"] = False
    assert "launcher: onesided at 2 ranks" in report_text(runs)


def test_a_real_job_writes_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "job.json"
    proc = subprocess.run(
        [sys.executable, "-m", "onesided", "run", "-n", "2", "--timeout", "100", "-m", "onesided.bench.hosts",
         "job", "--json", str(out), "--label", "launcher", "--reps", "2", "--seconds", "0.2"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    run = json.loads(out.read_text())
    assert run["ranks"] == 2 and run["hosts"] == 1
    figures = run["results"]["onesided"]
    assert figures["counter_ok"] is True
    assert set(FIGURES) <= set(figures)
    assert all(figures[k] > 0 for k in ("create_first", "create", "free", "fence", "counter", "rss", "fds"))
