"""The Window API: ``MPI.Win``'s names and conventions over the core.

Holds:

* ``_window``: :class:`onesided.Window`, creation and Free;
* ``_calls``: the calls table, every RMA call described once, and the
  forms a call takes once its arguments are bound;
* ``_rma_methods``: the Window's RMA methods (the full parse of each call),
  generated from the table;
* ``_sync``, ``_surface``, ``_notify``: its mixins (synchronisation; the
  members of ``MPI.Win`` that are not RMA; notified RMA);
* ``_null_window``: ``Window()``, the null window;
* ``_constants``: the window's constants and mpi4py's numbers for them;
* ``_operations``: each operation's full path (arguments parsed, then the
  core's full form);
* ``_request``, ``_aio``: requests of the R* forms, awaitable in asyncio;
* ``_atomics_report``: ``win.atomics``, where each (op, dtype) runs;
* ``_mpi_objects``: onesided's ``Info``, ``Group`` and ``buffer``, and
  ``Get_address``;
* ``_alloc_mem``: ``Alloc_mem`` and ``Free_mem``, memory that a ``Create``
  window over it lets every rank on the host map;
* ``__main__``: ``python -m onesided.window --write`` rewrites what the
  calls table makes.

May import: ``onesided._core``, ``_errors``, ``_types``, ``args`` and
``comm``. The mixins and helpers never import ``_window`` (the class
imports them); ``run``, ``notebook``, ``bench`` and the package root import
this package, never the reverse. Modules import each other's modules
directly; this ``__init__`` re-exports nothing.
"""
