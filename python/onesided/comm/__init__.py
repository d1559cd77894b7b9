"""COMM_WORLD: the communicator every window uses when given none.

Holds:

* ``_comm``: :class:`Comm`, the world of ``python -m onesided run``'s ranks
  (collectives served by the launcher's coordinator), :class:`WorldError`,
  and the wire protocol between ranks and the coordinator;
* ``_mpi_job``: the bridge to an MPI job (mpi4py's ``MPI.COMM_WORLD``
  itself when an MPI launcher started the process);
* ``_world``: which of the two this process has (:func:`world`).

May import: ``onesided._errors`` only (and the standard library). Nothing
here knows windows, the launcher or notebooks: ``args``, ``window``, ``run``
and ``notebook`` import this package, never the reverse. Modules import
each other's modules directly; this ``__init__`` re-exports nothing.
"""
