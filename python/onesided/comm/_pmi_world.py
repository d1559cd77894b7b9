"""COMM_WORLD for a rank an MPI launcher started, without mpi4py: the
launcher's process-management interface (PMIx, or the PMI-1/PMI-2 wire on
``PMI_FD``) carries one value, and from there the world is the same
:class:`~onesided.comm._comm.Comm` that ``python -m onesided run`` gives.

Rank 0 hosts a :class:`~onesided.comm._coordinator.Coordinator` in its own
process and publishes, under the key ``onesided-coordinator``, its port, a
fresh token, its host's identity and its IPv4 addresses; after the PMI
fence every other rank reads them, connects (through loopback on rank 0's
host, else to the first of rank 0's addresses that answers) and proves the
token. A first barrier over the new world ends the bootstrap.

Guarantees
----------
* Every wait of the bootstrap (the PMI fence, the connection, the first
  barrier) is bounded by ``ONESIDED_PMI_TIMEOUT`` seconds (default 60): a
  rank that never comes, or a rank 0 that dies before or after publishing,
  makes every other rank raise :class:`WorldError` saying which, instead of
  hanging. A rank 0 that died after publishing is seen at once (its
  coordinator's port refuses).
* At interpreter exit rank 0 keeps its coordinator serving until every rank
  has departed (said bye or closed its connection), for at most
  ``ONESIDED_PMI_TIMEOUT`` seconds; every rank then ends its PMI session.
* Which interface a job offers, and the refusal when none is usable, is
  :func:`pmi_client`'s: it names the variables it found and what works.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import secrets
import socket
from collections.abc import Callable, Mapping
from typing import Protocol

from ._comm import Comm, WorldError
from ._coordinator import Coordinator
from ._deadline import DeadlineExpired, deadline
from ._interfaces import routable_ipv4
from ._pmi_wire import PmiWire
from ._pmix import Pmix

__all__ = ["KEY", "KeyValueStore", "bootstrap_timeout", "formed_by", "pmi_client", "pmi_world", "publish"]

KEY = "onesided-coordinator"
"""The PMI key under which rank 0 publishes its coordinator."""

_DEFAULT_TIMEOUT = 60

_formed_by: str | None = None


def formed_by() -> str | None:
    """The interface that formed this process's world (``"PMI-1 wire on
    PMI_FD"``, ``"PMIx (libpmix.so.2)"``), or None if no PMI bootstrap ran."""
    return _formed_by


class KeyValueStore(Protocol):
    """What the bootstrap needs of a PMI client (:class:`PmiWire`, :class:`Pmix`)."""

    rank: int
    size: int
    name: str
    """Which interface, for messages and :func:`formed_by`."""

    def put(self, key: str, value: str) -> None: ...
    def fence(self) -> None: ...
    def get(self, key: str) -> str | None: ...
    def finalize(self) -> None: ...


def bootstrap_timeout(environ: Mapping[str, str]) -> int:
    """``ONESIDED_PMI_TIMEOUT``: whole seconds in [1, 86400], default 60."""
    text = environ.get("ONESIDED_PMI_TIMEOUT", "") or str(_DEFAULT_TIMEOUT)
    if not text.isdigit() or not 1 <= int(text) <= 86400:
        raise WorldError(f"ONESIDED_PMI_TIMEOUT={text!r} must be a whole number of seconds in [1, 86400]")
    return int(text)


def pmi_client(environ: Mapping[str, str], job: str, timeout: int) -> KeyValueStore:
    """The PMI client for this rank of ``job`` (what :func:`~onesided.comm._mpi_job.mpi_job`
    found), in this order: PMIx when ``PMIX_RANK`` or ``PMIX_NAMESPACE`` is
    set (Open MPI 5's mpirun, ``srun --mpi=pmix``), the PMI wire when
    ``PMI_FD`` is (MPICH's hydra, ``srun --mpi=pmi2``), PMIx when Open MPI's
    ``OMPI_COMM_WORLD_RANK`` is; else :class:`WorldError` naming what was found.
    Each of the client's waits is bounded by ``timeout`` seconds."""
    if "PMIX_RANK" in environ or "PMIX_NAMESPACE" in environ:
        return Pmix(environ, timeout)
    if "PMI_FD" in environ:
        return PmiWire(environ, timeout)
    if "OMPI_COMM_WORLD_RANK" in environ:
        return Pmix(environ, timeout)
    found = sorted(name for name in environ if name.startswith(("PMI_", "PMIX_", "OMPI_COMM_WORLD_"))
                   or name == "SLURM_MPI_TYPE")
    listed = ", ".join(f"{name}={environ[name]}" if name == "SLURM_MPI_TYPE" else name for name in found)
    raise WorldError(
        f"this process is one rank of an MPI job ({job} in its environment), mpi4py is not importable, "
        f"and its launcher offers no process-management interface onesided speaks "
        f"(found: {listed or 'no PMI_*, PMIX_* or OMPI_COMM_WORLD_* variable'}). "
        "onesided.COMM_WORLD spans such a job through PMIx (PMIX_RANK), the PMI-1/PMI-2 wire (PMI_FD) or "
        "Open MPI's OMPI_COMM_WORLD_* with PMIx: start it with `srun --mpi=pmi2` or `--mpi=pmix`, MPICH's "
        "mpiexec, Open MPI's mpirun or `python -m onesided run -n N`; or install mpi4py and pass comm="
    )


def _host_identity() -> str:
    """Which ranks reach rank 0 through loopback: same boot and network namespace."""
    with open("/proc/sys/kernel/random/boot_id") as boot:
        boot_id = boot.read().strip()
    return hashlib.sha256(f"{boot_id}/{os.stat('/proc/self/ns/net').st_ino}".encode()).hexdigest()[:32]


def publish(client: KeyValueStore, port: int, token: str) -> None:
    """Rank 0's part of the exchange: its coordinator's ``port`` and
    ``token``, its host and addresses, under :data:`KEY`, then the fence."""
    client.put(KEY, ":".join([str(port), token, _host_identity(), ",".join(routable_ipv4())]))
    client.fence()


def _coordinator_address(client: KeyValueStore) -> tuple[tuple[str, int], bytes]:
    """The other ranks' part: the fence, then rank 0's publication, read and checked."""
    client.fence()
    text = client.get(KEY)
    if text is None:
        raise WorldError(f"rank 0 published no {KEY} in the PMI key-value space (is it running onesided?)")
    parts = text.split(":")
    if len(parts) != 4 or not parts[0].isdigit():
        raise WorldError(f"rank 0's {KEY} is malformed: {text!r} (onesided versions differ?)")
    port, token, host, addresses = int(parts[0]), parts[1], parts[2], parts[3]
    if host == _host_identity():
        return ("127.0.0.1", port), token.encode("ascii")
    for address in filter(None, addresses.split(",")):
        try:
            socket.create_connection((address, port), timeout=3).close()
            return (address, port), token.encode("ascii")
        except OSError:
            continue
    raise WorldError(f"rank 0's coordinator (port {port}) answers at none of its addresses: {addresses or 'none'}")


def _first_barrier(comm: Comm, timeout: int, rank: int) -> None:
    """Every rank connected and authenticated, or :class:`WorldError` saying why not."""
    try:
        with deadline(timeout, "the bootstrap's first barrier"):
            comm.Barrier()
    except DeadlineExpired:
        raise WorldError(
            f"rank {rank}: not every rank of the job joined onesided's world within {timeout} s "
            "(ONESIDED_PMI_TIMEOUT): a rank died or never started onesided"
        ) from None
    except WorldError as exc:
        if rank == 0:
            raise
        raise WorldError(f"rank {rank}: rank 0, which hosts this job's coordinator, is gone: {exc}") from None


def _at_exit(function: Callable[..., None], *args: object) -> None:
    """Run ``function(*args)`` at this process's exit, never at a forked
    child's: the child shares the PMI socket and rank 0's coordinator, and
    would end the parent's PMI session or stop its coordinator."""
    pid = os.getpid()

    def run() -> None:
        if os.getpid() == pid:
            function(*args)

    atexit.register(run)


def _host_exit(coordinator: Coordinator, client: KeyValueStore, timeout: int) -> None:
    coordinator.wait_for_departures(timeout)
    coordinator.__exit__(None, None, None)
    client.finalize()


def pmi_world(environ: Mapping[str, str], job: str) -> Comm:
    """This rank's :class:`Comm` spanning the PMI job ``job`` (see the module's docstring)."""
    global _formed_by
    timeout = bootstrap_timeout(environ)
    client = pmi_client(environ, job, timeout)
    _formed_by = client.name
    if client.size == 1:
        _at_exit(client.finalize)
        return Comm()
    if client.rank == 0:
        token = secrets.token_hex(16)
        # Every interface: the others may be on this host or on any other.
        coordinator = Coordinator(client.size, token.encode("ascii"), "0.0.0.0")
        coordinator.__enter__()
        # Registered before the Comm registers its bye, so it runs after it.
        _at_exit(_host_exit, coordinator, client, timeout)
        port = int(coordinator.address.rpartition(":")[2])
        publish(client, port, token)
        comm = Comm(0, client.size, ("127.0.0.1", port), token.encode("ascii"))
    else:
        _at_exit(client.finalize)
        try:
            address, secret = _coordinator_address(client)
        except WorldError as exc:
            raise WorldError(f"rank {client.rank}: {exc}") from None
        comm = Comm(client.rank, client.size, address, secret)
    _first_barrier(comm, timeout, client.rank)
    return comm
