"""What a call's arguments mean: the parsing every Window call shares.

Holds:

* ``_integers``: the one check of every integer argument and its bounds;
* ``_layout``: :class:`onesided.Layout`, a strided region in numpy's terms;
* ``_datatypes``: mpi4py derived datatypes decoded into layouts;
* ``_buffers``: origin, result and target specifications (mpi4py's buffer
  forms) parsed into what the core moves;
* ``_mpi_args``: mpi4py's own objects (modes, lock types, ``Info``,
  ``Group``, communicators) translated, and a window constructor's checks.

May import: ``onesided._core``, ``onesided._errors``, ``onesided._types``
and ``comm`` (the default communicator). Nothing here knows the Window
class: ``window`` imports this package, never the reverse. Modules import
each other's modules directly; this ``__init__`` re-exports nothing.
"""
