"""``python -m onesided.bench``: see :mod:`onesided.bench`."""

from onesided.bench import main

raise SystemExit(main())
