"""``onesided.COMM_WORLD`` in a process that is one rank of an MPI job.

A process started by an MPI launcher (mpiexec, srun, ...) that was not
started by ``python -m onesided run`` would otherwise be a world of one rank,
and a window over ``onesided.COMM_WORLD`` would silently compute every rank's
answer alone. Instead, when :func:`mpi_job` finds such a job in the
environment, ``onesided.COMM_WORLD`` is an :class:`MpiWorld`: mpi4py's
``MPI.COMM_WORLD``, imported on first use.

Guarantees
----------
* Nothing is imported (MPI is not initialised) until the world is first
  used: a rank, a size, a collective or a window over it.
* With mpi4py importable, every method answers as ``MPI.COMM_WORLD``'s, and a
  window over the world is a window over ``MPI.COMM_WORLD`` (exactly as
  ``comm=MPI.COMM_WORLD``).
* Without it, that first use raises :class:`~onesided.comm._comm.WorldError`
  naming the variables that identify the job and saying to pass ``comm=``;
  so does every later use. It never falls back to a world of one rank.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

from ._comm import Comm, WorldError

__all__ = ["MpiWorld", "mpi_job", "window_group"]


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


class MpiWorld(Comm):
    """``onesided.COMM_WORLD`` of a rank of an MPI job: mpi4py's
    ``MPI.COMM_WORLD`` (see the module docstring)."""

    def __init__(self, job: str) -> None:
        super().__init__()
        self._job = job
        self._mpi_world: Any = None
        self._missing: str | None = None

    def mpi_comm(self) -> Any:
        """mpi4py's ``MPI.COMM_WORLD``, imported on first call; raises
        :class:`~onesided.comm._comm.WorldError` without mpi4py."""
        if self._mpi_world is None:
            if self._missing is None:
                try:
                    from mpi4py import MPI
                except ImportError as exc:
                    self._missing = str(exc)
                else:
                    self._mpi_world = MPI.COMM_WORLD
                    return self._mpi_world
            self._refuse()
        return self._mpi_world

    def _refuse(self) -> NoReturn:
        raise WorldError(
            f"this process is one rank of an MPI job ({self._job} in its environment), but "
            f"onesided.COMM_WORLD cannot span that job without mpi4py ({self._missing}). "
            "Install mpi4py and pass comm=MPI.COMM_WORLD (or any mpi4py communicator) to the window, "
            "or start the job with `python -m onesided run -n N`"
        )

    def Get_rank(self) -> int:
        """This process's rank in ``MPI.COMM_WORLD``."""
        rank: int = self.mpi_comm().Get_rank()
        return rank

    def Get_size(self) -> int:
        """The number of ranks of ``MPI.COMM_WORLD``."""
        size: int = self.mpi_comm().Get_size()
        return size

    rank = property(Get_rank)
    """This process's rank."""

    size = property(Get_size)
    """The number of ranks in the world."""

    def Barrier(self) -> None:
        """``MPI.COMM_WORLD.Barrier()``."""
        self.mpi_comm().Barrier()

    barrier = Barrier

    def allgather(self, obj: Any) -> list[Any]:
        """``MPI.COMM_WORLD.allgather(obj)``."""
        result: list[Any] = self.mpi_comm().allgather(obj)
        return result

    def bcast(self, obj: Any, root: int = 0) -> Any:
        """``MPI.COMM_WORLD.bcast(obj, root)``."""
        return self.mpi_comm().bcast(obj, root)

    def gather(self, obj: Any, root: int = 0) -> list[Any] | None:
        """``MPI.COMM_WORLD.gather(obj, root)``."""
        result: list[Any] | None = self.mpi_comm().gather(obj, root)
        return result

    def Abort(self, errorcode: int = 1) -> NoReturn:
        """``MPI.COMM_WORLD.Abort(errorcode)``: the MPI launcher stops the job."""
        self.mpi_comm().Abort(errorcode)
        raise SystemExit(errorcode)  # not reached: MPI's Abort does not return

    def __repr__(self) -> str:
        return f"Comm(mpi4py's MPI.COMM_WORLD; {self._job})"


def window_group(comm: Any) -> Any:
    """The group a window over ``comm`` uses: mpi4py's COMM_WORLD for an
    :class:`MpiWorld` (or its error), ``comm`` itself otherwise."""
    return comm.mpi_comm() if isinstance(comm, MpiWorld) else comm
