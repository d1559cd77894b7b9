"""Which COMM_WORLD this process has: :func:`world` builds it once from the
environment, as :func:`comm_from_environment` reads it: the launcher's
variables (a :class:`~onesided.comm._comm.Comm` served by its coordinator),
an MPI launcher's (mpi4py's ``MPI.COMM_WORLD`` itself,
:mod:`onesided.comm._mpi_job`), or none (a world of one rank).

Above both :mod:`onesided.comm._comm` and :mod:`onesided.comm._mpi_job`, so
that neither imports the other lazily.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import Any

from ._comm import ENV_COORD, ENV_RANK, ENV_SIZE, ENV_TOKEN, Comm, WorldError
from ._mpi_job import mpi_job, mpi_world

__all__ = ["comm_from_environment", "world"]


def comm_from_environment(environ: Mapping[str, str]) -> Any:
    """Build the world described by the launcher's variables in ``environ``.

    With none of them set this is a world of one rank, unless the process is
    one rank of an MPI job (:mod:`onesided.comm._mpi_job`): then it is mpi4py's
    ``MPI.COMM_WORLD`` (imported here), or :class:`WorldError` without mpi4py.
    A partial or malformed set raises :class:`WorldError`
    rather than silently running alone.
    """
    names = (ENV_COORD, ENV_RANK, ENV_SIZE)
    present = [name for name in names if name in environ]
    if not present:
        job = mpi_job(environ)
        return Comm() if job is None else mpi_world(job)
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
_world_lock = threading.Lock()


def world() -> Any:
    """Return this process's COMM_WORLD, creating it on first call: a
    :class:`Comm`, or in a rank of an MPI job mpi4py's ``MPI.COMM_WORLD``.
    A call that raises (an MPI job without mpi4py) keeps nothing, so every
    later call raises the same."""
    global _world
    with _world_lock:
        if _world is None:
            _world = comm_from_environment(os.environ)
        return _world
