"""``onesided.COMM_WORLD`` in a process that is one rank of an MPI job.

A process started by an MPI launcher (mpiexec, srun, ...) that was not
started by ``python -m onesided run`` would otherwise be a world of one rank,
and a window over ``onesided.COMM_WORLD`` would silently compute every rank's
answer alone. Instead, when :func:`mpi_job` finds such a job in the
environment, ``onesided.COMM_WORLD`` is mpi4py's ``MPI.COMM_WORLD`` itself
(:func:`mpi_world`), so it goes wherever mpi4py takes a communicator.

Guarantees
----------
* mpi4py is imported (and with it MPI initialised) only when the world is
  first asked for: reading ``onesided.COMM_WORLD`` or creating a window with
  no ``comm``. ``import onesided`` alone never initialises MPI, so a program
  may still set ``mpi4py.rc`` (thread level, ...) after importing onesided.
* With mpi4py importable, the world *is* ``MPI.COMM_WORLD``
  (``onesided.COMM_WORLD is MPI.COMM_WORLD``).
* Without it (:func:`mpi_world` returns None), the world is formed through
  the launcher's process-management interface
  (:mod:`onesided.comm._pmi_world`), or every ask raises
  :class:`~onesided.comm._comm.WorldError` naming the variables found. It
  never falls back to a world of one rank.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["mpi_job", "mpi_world"]


def _int(environ: Mapping[str, str], name: str) -> int | None:
    try:
        return int(environ[name])
    except (KeyError, ValueError):
        return None


def mpi_job(environ: Mapping[str, str]) -> str | None:
    """The variables showing that this process is one rank of an MPI job of
    more than one rank (``"PMI_RANK=1 PMI_SIZE=4"``), or None.

    Recognised: PMI (MPICH's Hydra, Intel MPI, MVAPICH: ``PMI_RANK`` and
    ``PMI_SIZE``), Open MPI (``OMPI_COMM_WORLD_RANK`` and ``..._SIZE``),
    PMIx (``PMIX_RANK``; the size is not in the environment, so any PMIx
    job counts), and a Slurm job step (``SLURM_PROCID`` with
    ``SLURM_STEP_NUM_TASKS``, which srun sets; a batch script, which has no
    step, is not a job of several ranks). A job of one rank is none.
    """
    for rank, size in (("PMI_RANK", "PMI_SIZE"), ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
                       ("SLURM_PROCID", "SLURM_STEP_NUM_TASKS")):
        count = _int(environ, size)
        if rank in environ and count is not None and count > 1:
            return f"{rank}={environ[rank]} {size}={count}"
    if "PMIX_RANK" in environ:
        return f"PMIX_RANK={environ['PMIX_RANK']}"
    return None


def mpi_world() -> Any:
    """mpi4py's ``MPI.COMM_WORLD``, importing mpi4py (which initialises MPI),
    or None when mpi4py is not importable."""
    try:
        from mpi4py import MPI
    except ImportError:
        return None
    return MPI.COMM_WORLD
