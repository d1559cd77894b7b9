"""Which libfabric onesided runs on, chosen once when onesided is imported.

onesided never links libfabric: its core loads one libfabric by path, with
its symbols private to onesided (RTLD_LOCAL and RTLD_DEEPBIND), and calls it
through a table. So the libfabric onesided uses is the one chosen here, and
another copy in the same process (an MPI wheel's, the site's) neither
replaces it nor is replaced by it. ``docs/packaging.md`` explains the choice.

The choice, in order:

* ``ONESIDED_LIBFABRIC=/path/to/libfabric.so.1``: that file (a site's or a
  vendor's build, for its ``cxi``, ``efa`` or ``verbs`` provider);
* ``ONESIDED_LIBFABRIC=system``: the dynamic loader's ``libfabric.so.1``
  (``LD_LIBRARY_PATH``, then the system's); if a library in the process has
  already loaded one (an MPI library), that one;
* ``ONESIDED_LIBFABRIC=bundled``, or nothing set: the copy a wheel carries in
  ``onesided.libs/`` (renamed by ``auditwheel``); where there is none (a build
  from source), the system's, as with ``system``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import _core

# Where `auditwheel repair` puts the libraries a wheel carries: beside the
# package (this file is onesided/boot/_libfabric.py), named
# <name>-<hash>.so.<version>.
_WHEEL_LIBS = Path(__file__).resolve().parents[2] / "onesided.libs"


@dataclass(frozen=True)
class Libfabric:
    """The libfabric this process runs on.

    ``path`` is the file the dynamic loader mapped; ``chosen_by`` says why it
    is that one: ``"bundled"`` (the wheel's copy), ``"system"`` (the loader's
    ``libfabric.so.1``) or ``"ONESIDED_LIBFABRIC"`` (a path set there);
    ``version`` is its ``fi_version()`` as ``(major, minor)``.
    """

    path: str
    chosen_by: str
    version: tuple[int, int]


def bundled_path() -> str:
    """The libfabric this wheel carries, or ``""`` outside a repaired wheel."""
    found = sorted(_WHEEL_LIBS.glob("libfabric-*.so*"))
    return str(found[0]) if found else ""


def load() -> Libfabric:
    """Loads the libfabric chosen as the module docstring says (once per
    process; later calls return the same) and says which it is.

    Raises :class:`onesided.ArgumentError` naming ``ONESIDED_LIBFABRIC`` if
    that variable names nothing loadable or not a libfabric >= 1.9, and
    :class:`onesided.TransportError` if there is no libfabric at all.
    """
    path, chosen_by, major, minor = _core.load_libfabric(bundled_path())
    return Libfabric(path=path, chosen_by=chosen_by, version=(major, minor))
