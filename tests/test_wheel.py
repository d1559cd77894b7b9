"""The repaired wheel, installed into a fresh venv, runs the README's example
on 2 ranks on the libfabric it carries with the system's hidden, and on the
system's when ONESIDED_LIBFABRIC selects it; each rank's /proc/self/maps
says which libfabric file is really mapped (docs/packaging.md).

Hiding needs a mount namespace (unshare --mount, bind-mounting an empty file
over the system's libfabric inside it): root only, as in CI.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from wheel_setup import REPORT, repaired_wheel, run_job, system_libfabric

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="hiding the system libfabric needs root (unshare --mount)")

# Inside a private mount namespace: the system's libfabric becomes an empty
# file; a plain dlopen of libfabric.so.1 must then fail (else the test would
# prove nothing), and the job runs.
HIDE_AND_RUN = """
set -e
mount --bind "$1" "$2"
shift 2
if "$1" -c 'import ctypes; ctypes.CDLL("libfabric.so.1")' 2>/dev/null; then
    echo "the system libfabric is still loadable" >&2; exit 3
fi
exec "$@"
"""


@pytest.fixture(scope="module")
def venv_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel and its dependencies from PyPI."""
    wheel = repaired_wheel()
    venv = tmp_path_factory.mktemp("wheel") / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], check=True, timeout=900)
    return python


def job(python: Path, n: int = 2) -> list[str]:
    return [str(python), "-m", "onesided", "run", "-n", str(n), "--timeout", "90", str(REPORT), "onesided"]


def check_example(reports: list[dict], n: int = 2) -> None:
    """Every rank ran the README example: one ticket each, all different."""
    assert [r["rank"] for r in reports] == list(range(n))
    assert sorted(r["ticket"] for r in reports) == list(range(n))


def test_bundled_libfabric_with_the_system_one_hidden(venv_python: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    hidden = system_libfabric()
    cmd = ["unshare", "--mount", "--propagation", "private", "sh", "-c", HIDE_AND_RUN, "sh",
           str(empty), str(hidden), *job(venv_python)]
    reports = run_job(cmd, env={"ONESIDED_LIBFABRIC": ""}, timeout=120)
    check_example(reports)
    libs = venv_python.parent.parent / "lib"
    for r in reports:
        path = Path(r["onesided"]["path"])
        assert r["onesided"]["chosen_by"] == "bundled"
        assert path.parent.name == "onesided.libs" and path.is_relative_to(libs), path
        assert r["libfabric_files"] == [str(path)], "only the bundled libfabric is mapped"
        assert r["onesided"]["version"] >= [1, 9]


@pytest.mark.parametrize("choice", ["system", "path"])
def test_system_libfabric_when_selected(venv_python: Path, choice: str) -> None:
    system = system_libfabric()
    value = "system" if choice == "system" else str(system)
    reports = run_job(job(venv_python), env={"ONESIDED_LIBFABRIC": value}, timeout=120)
    check_example(reports)
    for r in reports:
        assert r["onesided"]["chosen_by"] == ("system" if choice == "system" else "ONESIDED_LIBFABRIC")
        assert r["onesided"]["path"] == str(system)
        assert r["libfabric_files"] == [str(system)], "the bundled libfabric is not even mapped"


def test_a_libfabric_that_cannot_be_loaded_fails_the_import(venv_python: Path, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-libfabric.so.1"
    done = subprocess.run(
        [str(venv_python), "-c", "import onesided"],
        env={**os.environ, "ONESIDED_LIBFABRIC": str(missing)}, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode != 0
    assert "onesided._errors.ArgumentError: ONESIDED_LIBFABRIC=" in done.stderr
    assert str(missing) in done.stderr
