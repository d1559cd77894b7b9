"""Jobs whose ranks cannot import mpi4py, for the tests of the PMI bootstrap
(tests/test_pmi_world.py, tests/test_mpi_job.py) and any launcher's test that
wants the same (srun, ...): :func:`without_mpi4py` makes the environment,
:func:`run_job` runs a launcher's command in it with a deadline.

The shim is a package named mpi4py, first on PYTHONPATH, whose import raises
ImportError: mpi4py stays installed in the venv (the other tests need it),
but no rank can import it. tests/ranks/pmi_world.py checks that it really
is hidden before anything else.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from onesided.run._spawn import finish


def without_mpi4py(directory: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's environment) with a shim in
    ``directory`` first on PYTHONPATH that makes ``import mpi4py`` fail.
    A launcher that does not pass its environment on must be told to pass
    PYTHONPATH (Open MPI's mpirun: ``-x PYTHONPATH``)."""
    base = dict(os.environ if env is None else env)
    package = directory / "no-mpi4py" / "mpi4py"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("raise ImportError('mpi4py is hidden by the test')\n")
    paths = [str(package.parent), *filter(None, base.get("PYTHONPATH", "").split(os.pathsep))]
    base["PYTHONPATH"] = os.pathsep.join(paths)
    # Unbuffered, print writes each piece at once and two ranks' lines interleave.
    base.pop("PYTHONUNBUFFERED", None)
    return base


def run_job(cmd: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    """Run a launcher's command in its own session; past ``timeout`` seconds
    it is stopped with its ranks and the test fails. Returns its output
    whatever its exit status (the caller asserts on it)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    out, err, expired = finish(proc, timeout)
    assert not expired, f"{' '.join(cmd)} timed out after {timeout} s\nstdout:\n{out}\nstderr:\n{err}"
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)
