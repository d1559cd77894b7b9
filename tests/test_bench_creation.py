"""The window-creation figure (issue 27, item 4): ``python -m onesided.bench
--creation`` and the table across rank counts (``python -m
onesided.bench.creation``).

Shape and exactness only, never speed: the figure prints a row per
measure with parseable cells, its figures come from windows that were
made (the bench writes and reads back each window's memory, and a kind
that failed is named), the JSON carries the same rows, and the table
across rank counts puts each job's ratio in its row and peer's column.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from onesided.bench._common import fmt_ratio
from onesided.bench._creation import KINDS

from test_bench import across_rank_counts, bench, calibrations, number, ratio, tables

ROWS = ["first window of the job (Allocate)", "Free of the first window"] + [
    f"{kind}: {what}" for kind in KINDS for what in ("first of its kind", "later windows", "Free")]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], dict]:
    out = tmp_path_factory.mktemp("creation") / "run.json"
    proc = bench("--creation", "--quick", "--json", str(out), "--label", "peer A", ranks=3)
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc, json.loads(out.read_text())


def test_creation_table(run: tuple[subprocess.CompletedProcess[str], dict]) -> None:
    """Table 7 on 3 ranks (any size works): every row, onesided's figure
    positive with its spread, MPI.Win's beside it (MPICH makes every kind),
    a ratio; it opens with the calibration line and says the figure is the
    slowest rank's."""
    proc, _ = run
    rows = {r[0]: r[1:] for r in tables(proc.stdout)["7"]}
    assert list(rows) == ROWS
    for name, (ours, theirs, r) in rows.items():
        number(ours, "us")
        number(theirs, "us", positive=False)
        ratio(r)
    assert calibrations(proc.stdout) == {"7"}
    assert "on 3 ranks" in proc.stdout and "slowest rank" in proc.stdout
    assert "n/a" not in proc.stdout, "a kind was skipped: MPICH and onesided make every kind"


def test_creation_json(run: tuple[subprocess.CompletedProcess[str], dict]) -> None:
    """The JSON summary carries every row as (median, min, max) for both
    libraries, the first window's three equal (one call)."""
    _, data = run
    figure = next(f for f in data["figures"] if f["title"].startswith("7. Window creation"))
    assert [r["row"] for r in figure["rows"]] == ROWS
    for r in figure["rows"]:
        for triple in (r["onesided"], r["peer"]):
            lo, mid, hi = triple[1], triple[0], triple[2]
            assert 0 <= lo <= mid <= hi, r
        assert r["onesided"][0] > 0 and not r["higher_is_better"]
    first = figure["rows"][0]["onesided"]
    assert first[0] == first[1] == first[2]
    assert data["ranks"] == 3 and figure["calibration"] is not None


def test_windows_are_real(tmp_path: Path) -> None:
    """The figure's windows are the libraries' own: the bench's check
    (write a window's first word through its memory, read it back) fails
    on a window whose memory is not the size asked for."""
    import numpy as np

    from onesided.bench._creation import WORDS, _used

    class Fake:
        def tomemory(self) -> memoryview:
            return memoryview(np.zeros(WORDS - 1, np.int64))

    with pytest.raises(AssertionError):
        _used(Fake(), "Allocate")
    _used(Fake(), "Create_dynamic")  # no memory to check


def test_table_across_rank_counts(run: tuple[subprocess.CompletedProcess[str], dict], tmp_path: Path) -> None:
    """The real 3-rank job, the same relabelled as a 4-rank job (peer twice
    as slow) and as a second peer's: each ratio is its own job's, 4 ranks
    on 2 cores reads oversubscribed, and a peer without a job reads `-`."""
    rows, figure, text = across_rank_counts(run[1], "7. Window creation", "onesided.bench.creation",
                                            "7. Window creation and Free: Later windows: create", tmp_path)
    create = next(r for r in figure["rows"] if r["row"] == "Create: later windows")
    assert list(rows)[:2] == ["Allocate, 3 ranks (oversubscribed: 1.5 per core)",
                              "Allocate, 4 ranks (oversubscribed: 2 per core)"]
    _, a3, ratio_a3, b3, ratio_b3 = rows["Create, 3 ranks (oversubscribed: 1.5 per core)"]
    _, a4, ratio_a4, b4, ratio_b4 = rows["Create, 4 ranks (oversubscribed: 2 per core)"]
    assert ratio_a3 == ratio_b3 == fmt_ratio(create["onesided"][0], create["peer"][0])
    assert ratio_a4 == fmt_ratio(create["onesided"][0], 2 * create["peer"][0])
    assert b4 == ratio_b4 == "-"
    assert "peer A" in text and "peer B" in text and "Calibration" in text
