"""What ``import onesided`` does before anything uses the core.

Holds:

* ``_crash_signals``: keep a crashing rank's signal visible (run before the
  core, and with it libfabric, is loaded);
* ``_libfabric``: which libfabric the core runs on, chosen once at import.

May import: ``onesided._core`` only (``_libfabric``; ``_crash_signals``
imports nothing of onesided, so that the root can run it first). Imported
by the package root (and ``onesided._info``), never by ``comm``, ``args``,
``window``, ``run`` or ``notebook``. This ``__init__`` imports nothing: its
import must not load the core.
"""
