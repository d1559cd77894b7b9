"""What tests/test_wheel.py and tests/test_mpi_wheels.py share: the repaired
wheel (built by `make wheel`, which `make test` runs first, so here it is
normally up to date and make does nothing), jobs run with a deadline, and the
JSON lines tests/ranks/libfabric_report.py prints."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from onesided.run._spawn import finish

ROOT = Path(__file__).resolve().parent.parent
REPORT = Path(__file__).parent / "ranks" / "libfabric_report.py"


def repaired_wheel() -> Path:
    """dist/'s manylinux wheel, (re)built by `make wheel` if a source changed."""
    done = subprocess.run(["make", "-s", "wheel"], cwd=ROOT, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        pytest.fail(f"make wheel failed:\n{done.stdout}\n{done.stderr}")
    wheels = sorted((ROOT / "dist").glob("onesided-*-manylinux_*.whl"))
    if len(wheels) != 1:
        pytest.fail(f"expected one manylinux wheel in dist/, found {wheels}")
    return wheels[0]


def job_output(cmd: list[str], env: dict[str, str] | None = None, timeout: float = 120) -> str:
    """Runs a job in its own session (killed past the deadline); fails the
    test unless it exits 0; returns its stdout."""
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env, start_new_session=True
    )
    out, err, expired = finish(proc, timeout)
    if expired or proc.returncode != 0:
        why = f"timed out after {timeout} s" if expired else f"exited {proc.returncode}"
        pytest.fail(f"{' '.join(cmd)} {why}\nstdout:\n{out}\nstderr:\n{err}")
    return out


def run_job(cmd: list[str], env: dict[str, str] | None = None, timeout: float = 120) -> list[dict[str, Any]]:
    """job_output's job; returns the report of each rank, by rank."""
    out = job_output(cmd, env, timeout)
    # Found by their start, not by line: MPICH's mpiexec may pass one rank's
    # report and another's newline in either order.
    decoder, reports, at = json.JSONDecoder(), [], out.find('{"rank"')
    while at != -1:
        report, end = decoder.raw_decode(out, at)
        reports.append(report)
        at = out.find('{"rank"', end)
    return sorted(reports, key=lambda r: r["rank"])


def system_libfabric() -> Path:
    """The file the dynamic loader's libfabric.so.1 is (symlinks resolved)."""
    listing = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
    for line in listing.splitlines():
        name, _, path = line.strip().partition(" => ")
        if name.startswith("libfabric.so.1 ") and "x86-64" in name:
            return Path(path).resolve()
    pytest.fail("no system libfabric.so.1 (ldconfig -p): `make test` installs Debian's libfabric")
