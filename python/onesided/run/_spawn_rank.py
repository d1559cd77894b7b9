"""What each rank started by :func:`onesided.launch` runs (``python -m
onesided.run._spawn_rank JOB``). A module of its own: running ``_spawn`` itself
with ``-m`` would import it twice (the package imports it), which Python
warns about on every rank."""

import sys
from pathlib import Path

from ._spawn import _rank_main

raise SystemExit(_rank_main(Path(sys.argv[1])))
