"""Ranks that live across notebook cells: :class:`onesided.Ranks` and the
``%%ranks`` magic.

Holds:

* ``_ranks``: :class:`onesided.Ranks`, N ranks started once and fed code;
* ``_ranks_channel``: the control channel between a ``Ranks`` and its ranks;
* ``_rank_output``: whole lines out of one rank's output, and where a cell ends;
* ``_cell_server``: what each of those ranks runs, cell after cell;
* ``_ranks_magic``: the ``%%ranks`` cell magic (IPython imported only there,
  and this module only by ``onesided.load_ipython_extension``).

May import: ``onesided._errors``, ``comm`` and ``run`` (ranks start through
``python -m onesided run``; functions travel as ``onesided.launch``'s do).
Nothing here is imported by ``comm``, ``args``, ``window`` or ``run``; the
package root imports it. Modules import each other's modules directly; this
``__init__`` re-exports nothing.
"""
