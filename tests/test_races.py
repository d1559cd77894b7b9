"""The race checker (onesided_check=races, docs/checking.md) on RMARaceBench's
MPIRMA cases rewritten in Python (tests/ranks/races.py): every race between
two RMA calls or with an origin buffer found (where calls do not complete
in place), no report on any race-free case, on the shared-memory path, the
cross-memory path, libfabric's shm and tcp, and in nasty mode, at 2 and 3
ranks."""

from __future__ import annotations

import re

import pytest

from conftest import run_ranks

# (provider, extra environment, races.py flags): the paths a window can take.
PATHS = {
    "shared-memory": ("shm", {}, []),
    "cross-memory": ("shm", {}, ["--create"]),
    "libfabric-shm": ("shm", {"ONESIDED_SHARED_MEMORY": "off"}, []),
    "tcp": ("tcp;ofi_rxm", {}, []),
    # Nasty mode holds every call until it must complete: origin buffers
    # are watched there too, even on the shared-memory path.
    "nasty": ("shm", {"ONESIDED_NASTY": "1"}, []),
}
LINE = re.compile(r"^case (\S+) race=([01]) reach=([01]) found=([01]) checked=([01])$", re.M)


@pytest.mark.parametrize("ranks", [2, 3])
@pytest.mark.parametrize("path", list(PATHS))
def test_every_race_found_and_no_false_report(path: str, ranks: int) -> None:
    provider, env, flags = PATHS[path]
    out = run_ranks("races.py", ranks, *flags, provider=provider, env=env, timeout=60)
    cases = LINE.findall(out.stdout)
    assert len(cases) == 59, out.stdout + out.stderr
    wrong = [f"{name}: race={race} reach={reach} found={found} checked={checked}"
             for name, race, reach, found, checked in cases
             if found != str(int(race == reach == "1")) or checked != "1"]
    assert not wrong, "\n".join(wrong) + "\n" + out.stderr


def test_a_report_names_both_calls() -> None:
    """Rank, call, target bytes, dtype and op, epoch kind and source line of each call."""
    out = run_ranks("races.py", 3, "atomic-float-int-yes", timeout=60)
    assert "found=1" in out.stdout
    report = next(line for line in out.stderr.splitlines() if "data race" in line)
    assert "rank 1's window, bytes [0, 4)" in report, report
    assert re.search(r"Accumulate \(sum, float32\) from rank 0 at \S+races\.py:\d+", report), report
    assert re.search(r"Accumulate \(sum, int32\) from rank 2 at \S+races\.py:\d+", report), report
    assert report.count("a fence epoch") == 2, report


def test_error_mode_raises_race_error() -> None:
    out = run_ranks("races.py", 2, "error-mode", timeout=60)
    assert "PASS error-mode" in out.stdout


def test_ranks_must_agree_on_checking() -> None:
    out = run_ranks("races.py", 3, "disagreement", timeout=60)
    assert "PASS disagreement" in out.stdout
