"""COMM_WORLD: the communicator every window uses when given none.

Holds:

* ``_comm``: :class:`Comm`, the world of ``python -m onesided run``'s ranks
  (collectives served by the launcher's coordinator), :class:`WorldError`,
  and the wire protocol between ranks and the coordinator;
* ``_coordinator``: the server side of that wire protocol, which the
  launcher runs, and rank 0 of a PMI job (below);
* ``_mpi_job``: the bridge to an MPI job (mpi4py's ``MPI.COMM_WORLD``
  itself when an MPI launcher started the process);
* ``_pmi_world``: without mpi4py, a :class:`Comm` over such a job, formed
  through its launcher's process-management interface: ``_pmix`` (PMIx via
  libpmix, loaded at run time) or ``_pmi_wire`` (PMI-1/PMI-2 on
  ``PMI_FD``); ``_interfaces``: this machine's IPv4 addresses, which rank 0
  publishes;
* ``_world``: which of these this process has (:func:`world`);
* ``_polled``: the collectives a window runs over an mpi4py communicator
  (its duplicate, barriers, allgathers), waited for in Python so that
  Ctrl-C reaches them;
* ``_exit_deadline``: a rank that dies on an uncaught exception leaves
  within a deadline, whatever its exit waits for (MPI_Finalize).
* ``_deadline``: a deadline on this thread's collective waits (a window
  left by an exception frees within it).

May import: ``onesided._errors`` and ``onesided._core`` (the exit
deadline's thread), and the standard library and numpy. Nothing
here knows windows, the launcher or notebooks: ``args``, ``window``, ``run``
and ``notebook`` import this package, never the reverse. Modules import
each other's modules directly; this ``__init__`` re-exports nothing.
"""
