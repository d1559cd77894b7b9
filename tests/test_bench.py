"""`python -m onesided.bench` runs under (MPICH's) mpiexec and prints sane tables.

Only the shape and sanity of the output are checked (figures positive and
finite, ratios printed, the contended counter exact), never speed: the
machine that runs the tests is noisy.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from onesided.run._spawn import finish

from conftest import mpiexec

DEADLINE = 300  # seconds, against a hang; a quick run takes about 12 s idle and over 120 s with the cores busy


def bench(*args: str, env: dict[str, str] | None = None, ranks: int = 2) -> subprocess.CompletedProcess[str]:
    """Run the benchmark under MPICH's mpiexec in its own session; on the deadline
    the whole job is terminated (then its process group killed) and the test fails."""
    cmd = [mpiexec(), "-n", str(ranks), sys.executable, "-m", "onesided.bench", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})}, start_new_session=True)
    out, err, expired = finish(proc, DEADLINE)
    if expired:
        pytest.fail(f"{' '.join(cmd)} outlived {DEADLINE} s\nstdout:\n{out}\nstderr:\n{err}")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def tables(text: str) -> dict[str, list[list[str]]]:
    """Every markdown table of the output, keyed by the number of the
    '### N. title' heading above it; rows without the header and rule."""
    found: dict[str, list[list[str]]] = {}
    section = None
    for line in text.splitlines():
        m = re.match(r"### (\d+[a-z]?)\. ", line)
        if m:
            section = m.group(1)
        elif line.startswith("|") and section is not None:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            found.setdefault(section, []).append(cells)
    return {k: rows[2:] for k, rows in found.items()}  # drop header and |---| rule


def across_rank_counts(run: dict, title: str, module: str, section: str,
                       tmp_path: Path) -> tuple[dict[str, list[str]], dict, str]:
    """The table across rank counts (`module`, e.g. onesided.bench.scale) of
    three jobs made from one real --json job `run`: itself, the same
    relabelled as a 4-rank job whose peer took twice as long, and as a
    second peer's ("peer B") job at the same rank count, on a 2-core host.
    Returns the rows of the table under `### section` (label -> cells), the
    job's figure `title`, and the whole text."""
    figure = next(f for f in run["figures"] if f["title"].startswith(title))
    four = {**run, "ranks": 4, "cores": 2,
            "figures": [{**figure, "rows": [{**r, "peer": [v * 2 for v in r["peer"]]} for r in figure["rows"]]}]}
    files = []
    for name, blob in (("a", {**run, "cores": 2}), ("a4", four), ("b", {**run, "label": "peer B", "cores": 2})):
        files.append(tmp_path / f"{name}.json")
        files[-1].write_text(json.dumps(blob))
    text = subprocess.run([sys.executable, "-m", module, *map(str, files)],
                          capture_output=True, text=True, check=True).stdout
    lines = [line for line in text.split(f"### {section}", 1)[1].split("###", 1)[0].splitlines()
             if line.startswith("| ")]
    rows = {r[0]: r[1:] for r in ([c.strip() for c in line.strip().strip("|").split("|")] for line in lines[1:])}
    return rows, figure, text


SPREAD = re.compile(r"(.*) \[([^,\]]+), ([^\]]+)\]")


def number(cell: str, unit: str = "", positive: bool = True, spread: bool = True) -> float:
    """The figure in a cell, ``median unit [min, max]`` (``spread``) or
    ``value unit`` (a ratio): finite, min <= median <= max, and positive
    unless it is the peer's figure or a ratio (only onesided's own figures
    must be positive)."""
    m = SPREAD.fullmatch(cell)
    assert bool(m) == spread, f"{cell!r}: {'no' if spread else 'a'} [min, max]"
    text = m.group(1) if m else cell
    assert text.endswith(unit), f"{cell!r} does not end in {unit!r}"
    value = float(text[: len(text) - len(unit)].strip())
    assert math.isfinite(value) and (value > 0 if positive else value >= 0), cell
    if m:
        assert float(m.group(2)) <= value <= float(m.group(3)), f"{cell!r}: the median is not within [min, max]"
    return value


def ratio(cell: str) -> float:
    return number(cell, positive=False, spread=False)


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path | None]:
    charts = None
    try:
        import matplotlib  # noqa: F401

        charts = tmp_path_factory.mktemp("charts")
    except ImportError:
        pass
    args = ["--quick"] + (["--plot", str(charts)] if charts else [])
    proc = bench(*args)
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc, charts


def test_latency_table(quick: tuple[subprocess.CompletedProcess[str], Path | None]) -> None:
    rows = tables(quick[0].stdout)["1"]
    names = [r[0] for r in rows]
    assert names == ["put 8 B", "get 8 B", "accumulate SUM int64", "get_accumulate SUM int64",
                     "fetch_and_op SUM int64", "compare_and_swap int64", "rmw INC int64", "rmw2 COMP_SWAP_LT int64"]
    for name, fast, shm, mpi, r in rows:
        number(fast, "us")
        number(shm, "us")
        if name.startswith("rmw"):
            assert mpi == r == "n/a"
        else:
            number(mpi, "us", positive=False)
            ratio(r)
    assert "onesided_path=shared-memory" in quick[0].stdout


def test_lock_epoch_table(quick: tuple[subprocess.CompletedProcess[str], Path | None]) -> None:
    """Lock + op + Unlock on Allocate windows, Create windows over np.zeros
    and Create windows over each library's Alloc_mem memory, beside
    MPI.Win; the heading says where the locks live and that Create over
    onesided.Alloc_mem takes the shared-memory path."""
    rows = tables(quick[0].stdout)["1b"]
    assert [r[0] for r in rows] == ["put 8 B", "fetch_and_op SUM int64"]
    for name, alloc, mpi_alloc, ratio1, create, mpi_create, ratio2, create_am, mpi_create_am, ratio3 in rows:
        number(alloc, "us")
        number(create, "us")
        number(create_am, "us")
        for cell in (mpi_alloc, mpi_create, mpi_create_am):
            number(cell, "us", positive=False)
        for cell in (ratio1, ratio2, ratio3):
            ratio(cell)
    assert "locks: shared memory" in quick[0].stdout
    assert "Create over onesided.Alloc_mem memory takes the `shared-memory` path" in quick[0].stdout


def test_bandwidth_table(quick: tuple[subprocess.CompletedProcess[str], Path | None]) -> None:
    rows = tables(quick[0].stdout)["2"]
    assert rows[0][0] == "8 B" and rows[-1][0] == "4 MiB" and len(rows) >= 8
    for size, put, put_mpi, put_ratio, get, get_mpi, get_ratio, memcpy in rows:
        for cell in (put, get, memcpy):
            number(cell)
        for cell in (put_mpi, get_mpi):
            number(cell, positive=False)
        for cell in (put_ratio, get_ratio):
            ratio(cell)
    assert "cross-core memcpy" in quick[0].stdout and "cannot be measured" in quick[0].stdout


def test_bandwidth_by_kind_tables() -> None:
    """Figures 2b and 2c: put and get on every window kind beside MPI.Win
    of that kind and memcpy, every size (the figure checks at the target
    that the puts arrived, and a failed check fails the job)."""
    proc = bench("--only", "kinds", "--quick", "--reps", "2")
    assert proc.returncode == 0, proc.stderr
    found = tables(proc.stdout)
    assert set(found) == {"2b", "2c"}, proc.stdout
    for rows in found.values():
        assert [r[0] for r in rows] == ["8 B", "4 KiB", "1 MiB", "16 MiB"]
        for row in rows:
            number(row[1])  # memcpy
            for k in range(4):  # Allocate, Create, Allocate_shared, Create_dynamic: ours, MPI.Win, ratio
                number(row[2 + 3 * k])
                number(row[3 + 3 * k], positive=False)
                ratio(row[4 + 3 * k])
            ratio(row[14])


def test_bandwidth_buffers_move_each_repetition() -> None:
    """The bandwidth figures' buffers start at another page each repetition
    (the same offset within the page), cycling through their places, with
    their contents intact: no column keeps one virtual distance to them
    (docs/performance.md, "Bandwidth by window kind")."""
    from onesided.bench._common import RovingBuffer

    size = 1 << 20
    buffer = RovingBuffer(size, 7)
    starts = [buffer.at(rep, size).ctypes.data for rep in range(RovingBuffer.PLACES)]
    assert len(set(starts)) == RovingBuffer.PLACES
    assert {(s - starts[0]) % 4096 for s in starts} == {0}
    assert buffer.at(RovingBuffer.PLACES, size).ctypes.data == starts[0]
    for rep in range(RovingBuffer.PLACES):
        view = buffer.at(rep, size)
        assert view.size == size and (view == 7).all()


def test_message_rate_table(quick: tuple[subprocess.CompletedProcess[str], Path | None]) -> None:
    rows = tables(quick[0].stdout)["3"]
    assert [r[0] for r in rows] == ["put 8 B", "accumulate SUM int64"]
    for _, ours, theirs, r in rows:
        number(ours, "Mops/s")
        number(theirs, "Mops/s", positive=False)
        ratio(r)


def test_column_exchange_table(quick: tuple[subprocess.CompletedProcess[str], Path | None]) -> None:
    """Figure 3b: a strided column put, get and accumulate beside the copy
    through a contiguous temporary and MPI.Win with a vector datatype,
    every figure and both ratios printed (the figure checks at the target
    that the column holds the put plus every accumulate, and at the origin
    that the get brought it back, in both libraries)."""
    rows = tables(quick[0].stdout)["3b"]
    assert [r[0] for r in rows] == [f"shared-memory path, {n} x 64, {op}" for n in (64, 1024, 8192)
                                    for op in ("put", "get", "accumulate SUM")]
    for _, strided, packed, mpi, ratio_pack, ratio_mpi in rows:
        number(strided, "us")
        number(packed, "us")
        number(mpi, "us", positive=False)
        ratio(ratio_pack)
        ratio(ratio_mpi)


def test_notified_put_table(quick: tuple[subprocess.CompletedProcess[str], Path | None]) -> None:
    """Figure 3c: notified put beside put + flush + flag on onesided and on
    MPI.Win, every figure and both ratios printed (the figure itself checks
    that every notification and every flag round arrived)."""
    rows = tables(quick[0].stdout)["3c"]
    assert [r[0] for r in rows] == [f"shared-memory path, {n} B" for n in (8, 4096)]
    for _, notified, flag, mpi, ratio_flag, ratio_mpi in rows:
        number(notified, "us")
        number(flag, "us")
        number(mpi, "us", positive=False)
        ratio(ratio_flag)
        ratio(ratio_mpi)


def calibrations(text: str) -> set[str]:
    """The tables whose heading is followed by a calibration line with a
    positive round trip in [min, max] form."""
    found = set()
    lines = [line for line in text.splitlines() if line.strip()]
    for head, nxt in zip(lines, lines[1:]):
        m = re.match(r"### (\d+[a-z]?)\. ", head)
        c = re.match(r"calibration: core-to-core ping-pong .*?, (\S+ us \[[^\]]+\]) per round trip", nxt)
        if m and c:
            number(c.group(1), "us")
            found.add(m.group(1))
    return found


def test_every_table_opens_with_calibration(quick: tuple[subprocess.CompletedProcess[str], Path | None]) -> None:
    """Every table's heading is followed by its calibration line, and the
    heading names the libfabric the process runs on."""
    assert calibrations(quick[0].stdout) == set(tables(quick[0].stdout)) == {"1", "1b", "2", "3", "3b", "3c"}
    assert re.search(r"^libfabric in this process: \S*libfabric\.so", quick[0].stdout, re.M)


def test_json_and_table_across_peers(tmp_path: Path) -> None:
    """--json writes the run's summary rows; onesided.bench.peers puts two
    runs side by side with one ratio per run (the same run twice here: one
    MPI on this machine's test set-up)."""
    out = tmp_path / "run.json"
    proc = bench("--quick", "--iters", "50", "--reps", "2", "--json", str(out), "--label", "peer A")
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    run = json.loads(out.read_text())
    assert run["label"] == "peer A" and "libfabric" in run["libfabric"]
    latency = next(f for f in run["figures"] if f["title"].startswith("1. Latency"))
    put = next(r for r in latency["rows"] if r["row"] == "put 8 B")
    for triple in (put["onesided"], put["peer"], latency["calibration"]):
        assert triple[1] <= triple[0] <= triple[2]
    second = {**run, "label": "peer B"}
    (tmp_path / "b.json").write_text(json.dumps(second))
    text = subprocess.run([sys.executable, "-m", "onesided.bench.peers", str(out), str(tmp_path / "b.json")],
                          capture_output=True, text=True, check=True).stdout
    lines = [line for line in text.splitlines() if line.startswith("| put 8 B ")]
    assert lines, text
    cells = [c.strip() for c in lines[0].strip("|").split("|")]
    assert len(cells) == 2 + 2 * 2
    number(cells[2], "us", positive=False)
    assert cells[3] == cells[5] and ratio(cells[3]) > 0
    assert "peer A" in text and "peer B" in text and "Calibration" in text


def test_contended_commands_and_charts(quick: tuple[subprocess.CompletedProcess[str], Path | None]) -> None:
    out, charts = quick[0].stdout, quick[1]
    for n in (2, 4, 8):
        assert f"mpiexec -n {n} python -m onesided.bench --contended" in out
    assert "4" not in tables(out), "the contended table runs only with --contended or --all"
    assert "[bench" in quick[0].stderr, "progress goes to stderr"
    if charts is not None:
        for name in ("latency.png", "bandwidth.png"):
            assert (charts / name).read_bytes()[:4] == b"\x89PNG"


def test_contended_counter_is_exact() -> None:
    proc = bench("--contended", "--quick")
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    rows = {r[0]: r[1:] for r in tables(proc.stdout)["4"]}
    for figure in ("ops/s total", "ops/s per rank (median)", "ops/s per rank (slowest)"):
        ours, theirs, r = rows[figure]
        number(ours, "Mops/s")
        number(theirs, "Mops/s", positive=False)
        ratio(r)
    assert calibrations(proc.stdout) == {"4"}
    for cell in rows["final counter"][:2]:
        m = re.fullmatch(r"ok \((\d+) of (\d+)\)", cell)
        assert m and m.group(1) == m.group(2) and int(m.group(1)) > 0, cell


def test_plot_without_matplotlib_fails(tmp_path: Path) -> None:
    fake = tmp_path / "matplotlib"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('matplotlib hidden by the test')\n")
    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH", "")) if p)
    proc = bench("--quick", "--plot", str(tmp_path / "charts"), env={"PYTHONPATH": path})
    assert proc.returncode != 0
    assert "matplotlib" in proc.stderr
    assert not (tmp_path / "charts").exists()


class FakeMPI:
    """Just enough of mpi4py's MPI for the benchmark's peer detection."""

    def __init__(self, version: str) -> None:
        self.version = version

    def Get_library_version(self) -> str:
        return self.version


OPEN_MPI_41 = "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022\0"
MPICH_402 = "MPICH Version:\t4.0.2\nMPICH Release date:\tThu Apr  7 12:34:45 CDT 2022\n"


@pytest.mark.parametrize("osc, selected", [(None, False), ("sm", True), (" sm ", True), ("rdma", False),
                                           ("sm,rdma", False), ("^rdma", False), ("ucx", False)])
def test_open_mpi_41_osc_selection(monkeypatch: pytest.MonkeyPatch, osc: str | None, selected: bool) -> None:
    """Under Open MPI 4.1 the run says which osc it measures, and measures
    MPI.Win compare_and_swap only when OMPI_MCA_osc leaves nothing but osc/sm
    (its osc/rdma crashes on it: open-mpi/ompi#7027). No Open MPI needed."""
    from onesided.bench import _figures as fig

    if osc is None:
        monkeypatch.delenv("OMPI_MCA_osc", raising=False)
    else:
        monkeypatch.setenv("OMPI_MCA_osc", osc)
    ompi = FakeMPI(OPEN_MPI_41)
    assert fig.mpi_version(ompi) == OPEN_MPI_41.rstrip("\0")
    assert fig.mpi_cas_ok(ompi) is selected
    note = fig.ompi_note(ompi)
    assert note is not None and "open-mpi/ompi#7027" in note
    if selected:
        assert "selects its osc/sm component" in note and "skipped" not in note
        assert fig.mpi_peer(ompi) == "Open MPI v4.1.4 osc/sm"
    else:
        assert "compare_and_swap figures are skipped" in note and "--mca osc sm" in note
    mpich = FakeMPI(MPICH_402)
    assert fig.mpi_cas_ok(mpich) and fig.ompi_note(mpich) is None
    assert fig.mpi_version(mpich) == fig.mpi_peer(mpich) == "MPICH Version: 4.0.2"
