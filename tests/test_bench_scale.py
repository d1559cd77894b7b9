"""Scale on one host (issue 17, item 6): the many-windows figure (6a, 6b),
the contended counter's oversubscription note and the table across rank
counts (``python -m onesided.bench.scale``).

Shape and exactness only, never speed: the figures print, their cells
parse, the counters add up, the table across rank counts puts each job's
ratio in its row.
"""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from onesided.bench._common import fmt_ratio

from test_bench import across_rank_counts, bench, calibrations, number, ratio, tables

KINDS = ["onesided Allocate", "MPI.Win Allocate", "onesided Create", "MPI.Win Create"]
# `before: first / each / freed / collected`, each a count or a size
COUNT = r"[\d.e+-]+(?: [KMG]?i?B)?"
AMOUNT = rf"[+-]{COUNT}"
RESOURCE_CELL = re.compile(rf"{COUNT}: {AMOUNT} / {AMOUNT} / {AMOUNT} / {AMOUNT}")


@pytest.fixture(scope="module")
def windows() -> subprocess.CompletedProcess[str]:
    proc = bench("--windows", "--quick")
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def test_many_windows_time_table(windows: subprocess.CompletedProcess[str]) -> None:
    """Table 6a: create, Free and lock epochs over 100 windows and on one,
    for the four kinds; every counter read back adds up to the epochs
    issued (epochs lost or sent to the wrong window would not)."""
    rows = {r[0]: r[1:] for r in tables(windows.stdout)["6a"]}
    assert list(rows) == ["create, us per window", "Free, us per window",
                          "Lock + fetch_and_op + Unlock, 100 windows in turn",
                          "Lock + fetch_and_op + Unlock, 1 window", "100 windows / 1 window", "final counters"]
    for name in list(rows)[:4]:
        ours_a, mpi_a, r_a, ours_c, mpi_c, r_c = rows[name]
        number(ours_a, "us")
        number(ours_c, "us")
        for cell in (mpi_a, mpi_c):
            number(cell, "us", positive=False)
        for cell in (r_a, r_c):
            ratio(cell)
    for cell in rows["100 windows / 1 window"][::3] + rows["100 windows / 1 window"][1::3]:
        ratio(cell)
    for cell in rows["final counters"][0:2] + rows["final counters"][3:5]:
        m = re.fullmatch(r"ok \((\d+) of (\d+)\)", cell)
        assert m and m.group(1) == m.group(2) and int(m.group(1)) > 0, cell
    assert calibrations(windows.stdout) == {"6a"}, "6a opens with the calibration line, 6b follows it"


def test_many_windows_resource_table(windows: subprocess.CompletedProcess[str]) -> None:
    """Table 6b: every resource for every kind as `before: first / each /
    freed / collected`, and a process that has threads and descriptors."""
    rows = {r[0]: r[1:] for r in tables(windows.stdout)["6b"]}
    assert list(rows) == ["threads of rank 0's process", "open file descriptors of rank 0's process",
                          "resident memory of rank 0's process", "/dev/shm files the job maps or holds open",
                          "their size", "their memory (tmpfs blocks)"]
    for name, cells in rows.items():
        assert len(cells) == len(KINDS)
        for cell in cells:
            assert RESOURCE_CELL.fullmatch(cell), f"{name}: {cell!r}"
    for cell in rows["threads of rank 0's process"] + rows["open file descriptors of rank 0's process"]:
        assert int(cell.partition(":")[0]) >= 1, cell
    header = next(line for line in windows.stdout.splitlines() if line.startswith("| resource"))
    assert [c.strip() for c in header.strip("|").split("|")][1:] == KINDS


def _snapshot_counts_shm_files_once() -> None:
    """Run in a process of its own (the test below): threads of the pytest
    process that come and go (a peer watch, a finished job's reader)
    would move the thread count under it."""
    import mmap
    import os
    import threading
    import uuid

    from onesided.bench._resources import snapshot

    path = f"/dev/shm/onesided-test-resources-{uuid.uuid4().hex}"
    before = snapshot()
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    maps: list[mmap.mmap] = []
    release = threading.Event()
    thread = threading.Thread(target=release.wait)
    try:
        os.ftruncate(fd, 3 * mmap.PAGESIZE)
        maps = [mmap.mmap(fd, 3 * mmap.PAGESIZE) for _ in range(2)]
        maps[0][:1] = b"x"  # one page allocated
        thread.start()
        held = snapshot()
        os.unlink(path)
        unlinked = snapshot()
    finally:
        release.set()
        thread.join()
        for m in maps:
            m.close()
        os.close(fd)
        if os.path.exists(path):
            os.unlink(path)
    for snap in (held, unlinked):
        new = [e for k, e in snap.shm.items() if k not in before.shm]
        assert len(new) == 1, new
        assert new[0].path.startswith(path) and new[0].size == 3 * mmap.PAGESIZE
        assert new[0].allocated >= mmap.PAGESIZE
        # Python's mmap holds a duplicate of the descriptor: 3 descriptors, 2 mappings, 1 file
        assert snap.threads == before.threads + 1 and snap.fds == before.fds + 3, (before, snap)
    assert unlinked.shm[next(k for k in unlinked.shm if k not in before.shm)].path.endswith("(deleted)")
    after = snapshot()
    assert set(after.shm) == set(before.shm) and after.threads == before.threads, (before, after)


def test_resources_snapshot_counts_shm_files_once() -> None:
    """A /dev/shm file mapped twice and held open thrice counts once, with its
    size, also once unlinked; a new thread shows in the thread count; all
    of it is gone from the snapshot once released. In a fresh interpreter,
    whose only threads are the ones this makes."""
    source = inspect.getsource(_snapshot_counts_shm_files_once)
    proc = subprocess.run([sys.executable, "-c", f"{source}\n_snapshot_counts_shm_files_once()\n"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_oversubscription_is_said() -> None:
    """Table 4 says a job has more ranks than the host has cores, and only then."""
    from onesided.bench._common import Settings, Spread
    from onesided.bench._contended import contended_text

    one = Spread(1.0, 1.0, 1.0)
    figure = {"total": one, "per_rank": one, "slowest": one, "counter": 3, "expected": 3}
    res = {"rows": {"onesided": figure, "mpi": figure}, "cores": 2}
    s = Settings.make(True, None, None)
    assert "Oversubscribed: 3 ranks on 2 cores" in contended_text({**res, "ranks": 3}, s)
    assert "Oversubscribed: 8 ranks on 2 cores" in contended_text({**res, "ranks": 8}, s)
    assert "Oversubscribed" not in contended_text({**res, "ranks": 2}, s)


def test_table_across_rank_counts(tmp_path: Path) -> None:
    """A real 2-rank --contended --json job, and the same run relabelled as
    a 4-rank job of the same peer and a 2-rank job of a second peer: the
    table puts each job's ratio (of its own medians) in its rank count's
    row and peer's column, marks 4 ranks on 2 cores oversubscribed, and
    reads `-` where a peer has no job."""
    out = tmp_path / "run2.json"
    proc = bench("--contended", "--quick", "--reps", "2", "--json", str(out), "--label", "peer A")
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    rows, figure, text = across_rank_counts(json.loads(out.read_text()), "4. Contended counter",
                                            "onesided.bench.scale", "4. Contended counter: ops/s total", tmp_path)
    assert [r["row"] for r in figure["rows"]] == ["ops/s total", "ops/s per rank (median)", "ops/s per rank (slowest)"]
    assert list(rows) == ["2 ranks", "4 ranks (oversubscribed: 2 per core)"]
    total = next(r for r in figure["rows"] if r["row"] == "ops/s total")
    _, a2, ratio_a2, b2, ratio_b2 = rows["2 ranks"]
    _, a4, ratio_a4, b4, ratio_b4 = rows["4 ranks (oversubscribed: 2 per core)"]
    assert ratio_a2 == fmt_ratio(total["onesided"][0], total["peer"][0])
    assert ratio_a4 == fmt_ratio(total["onesided"][0], 2 * total["peer"][0])
    assert ratio_b2 == ratio_a2 and number(a2, "Mops/s", positive=False) == number(b2, "Mops/s", positive=False)
    assert b4 == ratio_b4 == "-"
    assert "peer A" in text and "peer B" in text and "Calibration" in text
