"""``python -m onesided.window --write``: rewrite what the calls table
makes (``_rma_methods.py`` and the table in docs/porting.md), from the
repository's root."""

import sys

from ._calls import main

sys.exit(main())
