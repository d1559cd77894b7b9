"""The one check of every integer argument (a rank, displacement, count,
size or disp_unit), and the bounds it checks against.

Below the rest of ``args``: buffers, layouts and mpi4py's arguments all
check their integers here.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .._errors import ArgumentError, ArgumentTypeError

__all__ = ["INT32_MAX", "INT32_MIN", "INT64_MAX", "INT64_MIN", "integer"]

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def integer(value: Any, what: str, lo: int = INT64_MIN, hi: int = INT64_MAX) -> int:
    """``value`` as a Python int, for a rank, displacement, count, size or
    disp_unit: a Python int or anything with ``__index__`` (numpy integers),
    but not a bool (a flag in the wrong place is a bug, not a 0 or a 1) and
    never a float or str (no ``int()`` coercion). Checked against
    ``[lo, hi]`` before anything narrows it. ArgumentTypeError (a TypeError)
    for the type, ArgumentError (a ValueError) for the range."""
    if type(value) is not int:
        if isinstance(value, (bool, np.bool_)):
            raise ArgumentTypeError(f"{what} must be an integer, not a bool ({value!r})")
        try:
            value = operator.index(value)
        except TypeError:
            raise ArgumentTypeError(f"{what} must be an integer, got {type(value).__name__} {value!r:.60}") from None
    if not lo <= value <= hi:
        raise ArgumentError(f"{what} must be in [{lo}, {hi}], got {value}")
    return value
