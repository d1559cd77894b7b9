"""A rank that dies on an uncaught exception leaves within a deadline.

A rank of a job that ends on an error still runs its exit: Python's atexit
handlers, then mpi4py's ``MPI_Finalize``. MPICH's ``MPI_Finalize`` waits for
every rank to finalize, so a rank ended by Ctrl-C, or by any bug, while its
peers wait in a collective (a ``Fence``, a window's creation) would never
exit, the launcher would never see a rank fail, and the job would never end.

Guarantees
----------
* In a process that is one rank of a job of several (under
  ``python -m onesided run``, mpiexec or srun), an exit that follows an
  uncaught exception (the traceback was printed) has
  :data:`DEFAULT_SECONDS` (``ONESIDED_EXIT_DEADLINE`` seconds, if set; 0
  turns the deadline off) to complete. If the process still exists then,
  it writes what it gave up to stderr and ends itself: by SIGINT after a
  ``KeyboardInterrupt`` (what Python itself ends such a process with), else
  with exit status 1. The launcher then sees a rank that failed and stops
  the others.
* An exit that completes in time is untouched, and so is every exit that
  does not follow an uncaught exception (a normal end, ``sys.exit``), an
  interactive session's, and a world of one rank's.
* The deadline is a native thread (onesided/exit_deadline.hpp): it needs
  neither the GIL nor Python, so it works while ``MPI_Finalize`` (which
  mpi4py runs after every Python atexit handler) holds the interpreter.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
from collections.abc import Mapping
from datetime import timedelta

from .. import _core
from ._comm import ENV_RANK, ENV_SIZE
from ._mpi_job import mpi_job

__all__ = ["DEFAULT_SECONDS", "install"]

DEFAULT_SECONDS = 1.0
"""Long enough for ranks that fail together to finalize together (that
takes milliseconds), short enough that a job with one failed rank ends
within about 2 s."""

ENV_SECONDS = "ONESIDED_EXIT_DEADLINE"


def _job_rank(environ: Mapping[str, str]) -> str | None:
    """How this process is one rank of a job of several ranks, or None."""
    size = environ.get(ENV_SIZE, "")
    if size.isdigit() and int(size) > 1:
        return f"rank {environ.get(ENV_RANK, '?')}"
    job = mpi_job(environ)
    return None if job is None else f"a rank of an MPI job ({job})"


def _seconds(environ: Mapping[str, str]) -> float:
    text = environ.get(ENV_SECONDS)
    if text is None:
        return DEFAULT_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        return DEFAULT_SECONDS  # a typo must not take the safety away
    return seconds if seconds == seconds else DEFAULT_SECONDS  # NaN


def _uncaught() -> type[BaseException] | None:
    """The class of the exception that ends the interpreter, if one does:
    the one Python printed (and left in sys.last_type) in a script's run."""
    if sys.flags.interactive or hasattr(sys, "ps1"):
        return None  # an interactive session prints errors and goes on
    kind = getattr(sys, "last_type", None)
    return kind if isinstance(kind, type) and issubclass(kind, BaseException) else None


def _arm_if_dying() -> None:
    kind = _uncaught()
    if kind is None:
        return
    where = _job_rank(os.environ)
    seconds = _seconds(os.environ)
    if where is None or seconds <= 0:
        return
    signum = int(signal.SIGINT) if issubclass(kind, KeyboardInterrupt) else 0
    how = "by SIGINT, as the KeyboardInterrupt would" if signum else "with exit status 1"
    message = (
        f"onesided: {where} (pid {os.getpid()}) still exiting {seconds:g} s after an uncaught "
        f"{kind.__name__}: its exit waits for ranks that will not come (MPI_Finalize, or a collective "
        f"in an atexit handler); ending it without them, {how} ({ENV_SECONDS} sets the deadline)\n"
    )
    _core._arm_exit_deadline(timedelta(seconds=seconds), signum, 1, message)


def install() -> None:
    """Arm the deadline at exit (see the module docstring). Python runs
    atexit handlers before mpi4py's ``MPI_Finalize`` (a ``Py_AtExit``
    function), whatever the import order."""
    atexit.register(_arm_if_dying)
