"""Which COMM_WORLD this process has: :func:`world` builds it once from the
environment, as :func:`comm_from_environment` reads it, in this order:

1. ``python -m onesided run``'s variables: a :class:`~onesided.comm._comm.Comm`
   served by the launcher's coordinator;
2. an MPI launcher's (:mod:`onesided.comm._mpi_job`) with mpi4py importable:
   mpi4py's ``MPI.COMM_WORLD`` itself;
3. an MPI launcher's without mpi4py: a :class:`Comm` formed through the
   launcher's PMIx, PMI wire (``PMI_FD``) or Open MPI's variables with PMIx
   (:mod:`onesided.comm._pmi_world`), else :class:`WorldError`;
4. none of these: a world of one rank.

Above :mod:`onesided.comm._comm`, :mod:`onesided.comm._mpi_job` and
:mod:`onesided.comm._pmi_world`, so that none imports another lazily.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import Any

from ._comm import ENV_COORD, ENV_RANK, ENV_SIZE, ENV_TOKEN, Comm, WorldError
from ._mpi_job import mpi_job, mpi_world
from ._pmi_world import pmi_world

__all__ = ["comm_from_environment", "world"]


def comm_from_environment(environ: Mapping[str, str]) -> Any:
    """Build the world described by the launcher's variables in ``environ``.

    With none of them set this is a world of one rank, unless the process is
    one rank of an MPI job (:mod:`onesided.comm._mpi_job`): then it is mpi4py's
    ``MPI.COMM_WORLD`` (imported here), or without mpi4py a :class:`Comm`
    formed through the launcher's PMI (:func:`~onesided.comm._pmi_world.pmi_world`,
    which raises :class:`WorldError` when the launcher offers none it speaks).
    A partial or malformed set raises :class:`WorldError`
    rather than silently running alone.
    """
    names = (ENV_COORD, ENV_RANK, ENV_SIZE)
    present = [name for name in names if name in environ]
    if not present:
        job = mpi_job(environ)
        if job is None:
            return Comm()
        mpi4py_world = mpi_world()
        return pmi_world(environ, job) if mpi4py_world is None else mpi4py_world
    if len(present) != len(names):
        missing = ", ".join(name for name in names if name not in environ)
        raise WorldError(f"incomplete onesided launcher environment: {missing} not set")
    try:
        host, _, port = environ[ENV_COORD].rpartition(":")
        host = host[1:-1] if host.startswith("[") and host.endswith("]") else host  # [IPv6]:port
        if not host:
            raise ValueError(f"{ENV_COORD}={environ[ENV_COORD]!r} is not host:port")
        address = (host, int(port))
        rank = int(environ[ENV_RANK])
        size = int(environ[ENV_SIZE])
        return Comm(rank, size, address, environ.get(ENV_TOKEN, "").encode("ascii"))
    except ValueError as exc:
        raise WorldError(f"malformed onesided launcher environment: {exc}") from None


_world: Any = None
_failure: str | None = None
_world_lock = threading.Lock()


def world() -> Any:
    """Return this process's COMM_WORLD, creating it on first call: a
    :class:`Comm`, or in a rank of an MPI job with mpi4py importable mpi4py's
    ``MPI.COMM_WORLD``. A call that raises (an MPI job whose launcher offers
    no interface onesided speaks, a bootstrap that failed) keeps its error:
    every later call raises it again, and never bootstraps twice."""
    global _world, _failure
    with _world_lock:
        if _failure is not None:
            raise WorldError(_failure)
        if _world is None:
            try:
                _world = comm_from_environment(os.environ)
            except WorldError as exc:
                _failure = str(exc)
                raise
        return _world
