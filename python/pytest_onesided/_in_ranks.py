"""Run one marked test on N ranks from the parent pytest process, and turn
how the ranks ended into the test's outcome.

The ranks are started by :func:`onesided.launch` (so by ``python -m onesided
run``, which stops every rank on the first failure or at the timeout, and
sweeps what killed ranks leave in ``/dev/shm``); the parent never runs the
test's body. The outcome:

* every rank returned: the test passes;
* a rank raised: the test fails with the report of the rank that failed
  first (its number, and its traceback as pytest renders it), naming the
  other ranks that failed too; ``pytest.skip`` and ``pytest.xfail`` on the
  first rank to stop skip or xfail the test instead;
* the timeout passed: the test fails saying so (every rank was stopped);
* a rank died without a report (a signal, ``os._exit``): the test fails with
  the launcher's account.

What the ranks print is printed here after the job, so pytest captures it
as the test's output.
"""

from __future__ import annotations

import pickle
import sys
import tempfile
from pathlib import Path

import pytest

from ._rank import RankCall, RankReport, run_test


def attribute_path(item: pytest.Function) -> tuple[str, ...]:
    """Where the test is in its module: its classes' names, then its own."""
    names = [item.originalname]
    node = item.parent
    while isinstance(node, pytest.Class):
        names.insert(0, node.name)
        node = node.parent
    return tuple(names)


def _call(item: pytest.Function, report_dir: str) -> RankCall:
    config = item.config
    return RankCall(
        path=str(item.path),
        attributes=attribute_path(item),
        # Checked at set-up (_marker.check_runnable): parameters and tmp_path only.
        kwargs={name: item.funcargs[name] for name in item._fixtureinfo.argnames},
        sys_path=tuple(sys.path),
        import_mode=str(config.getoption("importmode")),
        rootpath=str(config.rootpath),
        consider_namespace_packages=bool(config.getini("consider_namespace_packages")),
        rewrite_patterns=(
            tuple(config.getini("python_files")) if config.getoption("assertmode") == "rewrite" else None
        ),
        tbstyle=str(config.getoption("tbstyle")),
        showlocals=bool(config.getoption("showlocals")),
        report_dir=report_dir,
    )


def _reports(directory: Path) -> list[tuple[int, RankReport]]:
    """The ranks' reports, first written first: later ones are usually ranks
    that failed because the first one left."""
    files = sorted(directory.glob("rank*"), key=lambda path: path.stat().st_mtime_ns)
    return [(int(path.name[4:]), pickle.loads(path.read_bytes())) for path in files]


def run(item: pytest.Function, n: int, timeout: float) -> None:
    """Run ``item`` on ``n`` ranks; return if all pass, else raise pytest's
    outcome (fail, skip or xfail) as described in the module docstring."""
    from onesided.run._spawn import LaunchError, LaunchTimeout, launch

    with tempfile.TemporaryDirectory(prefix="onesided-pytest-") as report_dir:
        try:
            launch(run_test, n, _call(item, report_dir), timeout=timeout)
            return
        except LaunchTimeout:
            pytest.fail(f"Timeout: the {n} ranks did not finish within {timeout:g} s; all were stopped",
                        pytrace=False)
        except LaunchError as failure:
            reports = _reports(Path(report_dir))
            if not reports:
                pytest.fail(f"the {n} ranks ended without a test report: {failure}", pytrace=False)
    rank, first = reports[0]
    if first.outcome == "skipped":
        pytest.skip(f"rank {rank}: {first.summary}")
    if first.outcome == "xfailed":
        pytest.xfail(f"rank {rank}: {first.summary}")
    others = [str(r) for r, _ in reports[1:]]
    also = f" (then rank{'s' if len(others) > 1 else ''} {', '.join(others)} too)" if others else ""
    traceback = f"\n\n{first.text}" if first.text else ""
    pytest.fail(f"rank {rank} of {n} failed{also}: {first.summary}{traceback}", pytrace=False)
