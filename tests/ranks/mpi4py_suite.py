"""mpi4py's own RMA tests, run against onesided.Window.

onesided.Window is meant as a drop-in for mpi4py's ``MPI.Win``, so the tests
mpi4py itself ships for ``MPI.Win`` (test_rma, test_rma_nb and test_win, from
the test/ folder of mpi4py's source distribution) must pass with it too. This
runner puts that folder first on ``sys.path``, replaces ``MPI.Win`` with
``onesided.Window`` and ``MPI.WIN_NULL`` with ``onesided.WIN_NULL`` before any
test module is imported (so every window the tests make, and every check
against WIN_NULL, is onesided's), and runs the modules with unittest. The
tests loop over every array backend mpi4py's arrayimpl.py offers here
(``array``, ``numpy``, and the DLPack capsules of dlpackimpl.py over each,
``dlpack-array`` and ``dlpack-numpy``; arrays with a fake
``__cuda_array_interface__`` over host memory run too, labelled ``array`` and
``numpy``); the runner records the backends the loop actually gave the tests.

Usage:

    python mpi4py_suite.py TESTDIR [MODULE ...]                        (1 rank)
    mpiexec -n 2 python -m mpi4py mpi4py_suite.py TESTDIR [MODULE ...]

TESTDIR is mpi4py's test/ folder, of the mpi4py version installed
(build/mpi4py-tests, which the Makefile fetches); MODULE defaults to the
three above. ``--deadline S`` ends a rank whose test runs longer than S
seconds (setUp and tearDown included): it prints ``HANG rank <r> <test id>``
on stdout and every thread's stack on stderr, then exits 3 (a faulthandler
timer a little later does the same, without the test's name, should the
rank hold the GIL), so a hang costs one deadline and names its test and
place.

Each rank prints ``PID <pid>`` when it starts (tests/test_mpi4py_suite.py
looks for what those processes leave in /dev/shm) and, at its end, one line

    MPI4PY_SUITE {"rank": 0, "size": 2, "run": 150, "failures": 0, ...}

(JSON after the tag) on stdout; the tracebacks of its failures and errors,
and why tests were skipped, go to stderr. The ranks meet in a barrier after
printing, then a rank with failures or errors exits 1. The summary also
gives the slowest test and its seconds (``slowest``).
"""

from __future__ import annotations

import argparse
import faulthandler
import importlib
import io
import json
import os
import sys
import threading
import time
import unittest
from collections import Counter
from typing import Any

import mpi4py
from mpi4py import MPI

import onesided

MODULES = ["test_rma", "test_rma_nb", "test_win"]
TAG = "MPI4PY_SUITE"


class RecordingLoop:
    """Stands in for ``arrayimpl.loop`` and counts the cases it yields per
    backend (``backend`` names the kind of array; FakeGPUArray* classes reuse
    ``array``/``numpy``, so their class names are counted too). Attributes the
    original sets on ``loop`` (``loop.array``, ``loop.typecode``, read by
    ``arrayimpl.test`` and ``arrayimpl.scalar``) land on this object, where
    those functions now look them up; anything else comes from the original."""

    def __init__(self, loop: Any) -> None:
        self._loop = loop
        self.backends: Counter[str] = Counter()
        self.classes: Counter[str] = Counter()

    def __call__(self, *args: Any) -> Any:
        for case in self._loop(*args):
            self.backends[case[0].backend] += 1
            self.classes[case[0].__name__] += 1
            yield case

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loop, name)


class Watchdog:
    """Ends the process when the armed test outlives its deadline."""

    def __init__(self, rank: int, deadline: float | None) -> None:
        self.rank = rank
        self.deadline = deadline
        self._timer: threading.Timer | None = None

    def arm(self, test_id: str) -> None:
        if self.deadline:
            self._timer = threading.Timer(self.deadline, self._expire, (test_id,))
            self._timer.daemon = True
            self._timer.start()
            faulthandler.dump_traceback_later(self.deadline + 10, exit=True)

    def disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
            faulthandler.cancel_dump_traceback_later()

    def _expire(self, test_id: str) -> None:
        print(f"HANG rank {self.rank} {test_id}: still running after {self.deadline} s", flush=True)
        faulthandler.dump_traceback(all_threads=True)
        sys.stderr.flush()
        os._exit(3)


class TimedResult(unittest.TextTestResult):
    """unittest's result, with each test under the watchdog and timed."""

    watchdog: Watchdog
    slowest: tuple[float, str] = (0.0, "")

    def startTest(self, test: unittest.TestCase) -> None:
        super().startTest(test)
        self._started = time.monotonic()
        self.watchdog.arm(test.id())

    def stopTest(self, test: unittest.TestCase) -> None:
        self.watchdog.disarm()
        elapsed = time.monotonic() - self._started
        if elapsed > self.slowest[0]:
            self.slowest = (elapsed, test.id())
        super().stopTest(test)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("testdir", help="mpi4py's test/ folder")
    parser.add_argument("modules", nargs="*", default=MODULES)
    parser.add_argument("--deadline", type=float, default=None)
    args = parser.parse_args()

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    print(f"PID {os.getpid()}", flush=True)
    faulthandler.enable()
    TimedResult.watchdog = Watchdog(rank, args.deadline)

    MPI.Win = onesided.Window
    MPI.WIN_NULL = onesided.WIN_NULL
    sys.path.insert(0, os.path.abspath(args.testdir))
    import arrayimpl  # mpi4py's, from testdir

    loop = RecordingLoop(arrayimpl.loop)
    arrayimpl.loop = loop
    suite = unittest.TestSuite()
    for name in args.modules:
        suite.addTests(unittest.defaultTestLoader.loadTestsFromModule(importlib.import_module(name)))
    result = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0, resultclass=TimedResult).run(suite)
    assert isinstance(result, TimedResult)

    details = [f"rank {rank} {kind}: {test}\n{text}"
               for kind, found in (("FAIL", result.failures), ("ERROR", result.errors)) for test, text in found]
    details += [f"rank {rank} SKIP: {test}: {reason}\n" for test, reason in result.skipped]
    if details:
        sys.stderr.write("".join(details))
        sys.stderr.flush()
    summary = {
        "rank": rank,
        "size": size,
        "mpi4py": mpi4py.__version__,
        "win_class": f"{MPI.Win.__module__}.{MPI.Win.__qualname__}",
        "run": result.testsRun,
        "failures": len(result.failures),
        "errors": len(result.errors),
        "skipped": len(result.skipped),
        "expected_failures": len(result.expectedFailures),
        "unexpected_successes": len(result.unexpectedSuccesses),
        "backends": dict(sorted(loop.backends.items())),
        "array_classes": dict(sorted(loop.classes.items())),
        "slowest": [result.slowest[1], round(result.slowest[0], 2)],
    }
    print(f"{TAG} {json.dumps(summary)}", flush=True)
    comm.Barrier()  # every rank has printed before a failing one ends the job
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
