"""The side-by-side cases of the mpi4py conformance suite (issue 14).

Each case is a function ``case(Win, MPI, comm, np)`` that runs on every rank
of a 2-rank job, once with ``Win = MPI.Win`` (mpi4py on MPICH) and once with
``Win = onesided.Window``, and returns a comparable value: values read back,
attribute values, or the exception it ran into (a :class:`Raised`). The code
of a case is code written for ``MPI.Win``: the only thing that changes between
the two runs is the class. tests/ranks/conformance.py runs them and prints one
line per case; tests/test_conformance.py itemises those lines.

The cases are written from mpi4py's documented behaviour (the ``MPI.Win``
reference, ``MPI.pyi`` and ``mpi4py.util.sync``), not from mpi4py's test suite.

Rules every case keeps, so that both ranks always reach the same collective
calls in the same order:

* every rank runs the same calls (each rank targets its peer, ``1 - rank``);
* a call that may raise on one class and not the other runs inside
  :func:`attempt`, which turns an exception into a :class:`Raised` value and
  lets the case go on to its Fence/Unlock/Free;
* windows are created and freed by both ranks (the :func:`window` context
  manager frees on the way out, also after an exception);
* nothing sleeps to synchronise; spin-waits (``mpi4py.util.sync``) are
  bounded by :func:`sync_module`;
* buffers given to RMA calls stay referenced (:func:`keep`) until the case
  is over, since mpi4py keeps no reference and MPI may use them until the
  epoch closes.

Exceptions are compared by :func:`match` (see :class:`Raised`): an
``MPI.Exception`` on the mpi4py side is matched by any ``onesided.Error``,
anything else by its first builtin base class.

A few util.sync cases (DOCUMENTED) are compared with mpi4py's documented
result instead of an MPI.Win run, because MPICH 4.0.2 on this machine breaks
util.sync's Mutex (see the comment above DOCUMENTED).

The cases live in one module per concern, on top of _support (the registry
CASES, the @case decorator, and the helpers: results, windows):

* _surface: the MPI.Win members, constructors, flavor/model/attributes,
  group, info, name, error handlers, memory, lifetime;
* _operations: Put, Get, Accumulate/Get_accumulate,
  Fetch_and_op/Compare_and_swap, MPI.PROC_NULL targets, request-based calls;
* _sync: Fence, Lock/Unlock, Lock_all, Flush, Sync, PSCW;
* _window_kinds: shared and dynamic windows, a communicator freed early;
* _util_sync: mpi4py.util.sync, and DOCUMENTED;
* _pairs: MAXLOC/MINLOC on MPI's pair types, NO_OP's origins, MPICH's
  which_accumulate_ops, mixed structs in Put/Get, adjacent dynamic regions.

Importing a module registers its cases, so the imports below give CASES its
order (the order of the test ids): keep it.

This package imports only the standard library at the top, so that pytest can
import it for the case names without MPI.
"""

from __future__ import annotations

# isort: off
from . import _surface, _operations, _sync, _window_kinds, _util_sync, _pairs  # noqa: F401  (registers the cases, in order)
# isort: on
from ._support import CASES, KEEP, Raised, match, norm
from ._util_sync import DOCUMENTED

__all__ = ["CASES", "DOCUMENTED", "KEEP", "Raised", "match", "norm"]
