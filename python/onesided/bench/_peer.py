"""Which MPI the peer is: its version, and for Open MPI the RMA component
(osc) it runs on, as the run's heading and the table notes name it."""

from __future__ import annotations

import os
import sys
from typing import Any

# Open MPI 4.1's osc/rdma, its default RMA component for MPI.Win.Allocate
# between ranks of one node, crashes on compare-and-swap (open-mpi/ompi#7027);
# its osc/sm component does not, and is its fastest path on one host.
OMPI_ISSUE = "open-mpi/ompi#7027"


def open_mpi_41(MPI: Any) -> bool:
    return "Open MPI v4.1" in MPI.Get_library_version()


def ompi_osc() -> str | None:
    """The osc components Open MPI may select, as OMPI_MCA_osc names them
    (``mpiexec --mca osc sm`` sets OMPI_MCA_osc=sm in every rank); None when
    unset."""
    value = os.environ.get("OMPI_MCA_osc")
    return value.strip() if value is not None else None


def osc_sm_selected() -> bool:
    """Whether OMPI_MCA_osc leaves Open MPI no RMA component but osc/sm."""
    return {c.strip() for c in (ompi_osc() or "").split(",")} == {"sm"}


def mpi_cas_ok(MPI: Any) -> bool:
    return not open_mpi_41(MPI) or osc_sm_selected()


def ompi_note(MPI: Any) -> str | None:
    """What the run says about Open MPI 4.1's RMA component (None for any
    other MPI): which osc it runs on, or that compare_and_swap is skipped."""
    if not open_mpi_41(MPI):
        return None
    if osc_sm_selected():
        return ("note: this is Open MPI 4.1. OMPI_MCA_osc=sm (as `mpiexec --mca osc sm` sets it) selects its "
                "osc/sm component for MPI.Win, its shared-memory RMA path between ranks of one host, instead of "
                f"its default osc/rdma, which crashes on MPI_Compare_and_swap between ranks of one node ({OMPI_ISSUE}). "
                "Every MPI.Win figure below is osc/sm.")
    osc = "unset" if ompi_osc() is None else f"`{ompi_osc()}`"
    return ("note: this is Open MPI 4.1, and OMPI_MCA_osc is " + osc + ", which does not select osc/sm alone: "
            "MPI.Win may run on osc/rdma, which crashes on MPI_Compare_and_swap between ranks of one node "
            f"({OMPI_ISSUE}), so the MPI.Win compare_and_swap figures are skipped. Run with "
            "`mpiexec --mca osc sm ...` (or OMPI_MCA_osc=sm) to measure every figure on osc/sm.")


def mpi_version(MPI: Any) -> str:
    """The first line of MPI_Get_library_version (Open MPI counts the
    string's terminating NUL in it)."""
    return " ".join(MPI.Get_library_version().replace("\0", "").splitlines()[0].split())


def mpi_peer(MPI: Any) -> str:
    """The peer in a few words, for table notes and chart titles: the
    library version and, for Open MPI, the osc component OMPI_MCA_osc names
    (for MPICH, its device when the version string names it)."""
    version = mpi_version(MPI)
    if not version.startswith("Open MPI"):
        device = [line.split(":", 1)[1].strip() for line in MPI.Get_library_version().splitlines()
                  if line.startswith("MPICH Device:")]
        return f"{version} ({device[0]})" if device else version
    osc = ompi_osc()
    return f"{version.split(',')[0]} osc/{osc}" if osc else f"{version.split(',')[0]} (OMPI_MCA_osc unset)"


def shown_path(path: str, environment: str = sys.prefix, project: str | None = None) -> str:
    """``path`` as a table prints it, never naming the machine's checkout:
    inside the Python environment as ``<environment's name>/...``
    (``.venv-mpich5/lib/mpich/libfabric.so.1``), inside the project (the
    working directory) relative to it, a system path as it is."""
    full = os.path.abspath(path)
    env = os.path.abspath(environment)
    if full.startswith(env + os.sep):
        return os.path.join(os.path.basename(env), os.path.relpath(full, env))
    root = os.path.abspath(project if project is not None else os.getcwd())
    if full.startswith(root + os.sep):
        return os.path.relpath(full, root)
    return path


def libfabric_in_process() -> str:
    """The libfabric this process runs on (its path in /proc/self/maps, as
    :func:`shown_path` shows it): with an MPI wheel that carries its own
    libfabric.so.1 (Open MPI's, MPICH's) imported first, onesided shares that
    one (issue 18)."""
    try:
        with open("/proc/self/maps") as maps:
            found = {shown_path(line.split()[-1]) for line in maps if "libfabric.so" in line and "/" in line}
    except OSError:
        return "unknown"
    return ", ".join(sorted(found)) or "not loaded"
