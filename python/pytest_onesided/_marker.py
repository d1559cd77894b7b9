"""What ``@pytest.mark.ranks(N, timeout=S)`` means, and which tests it can mark.

Every check here runs in the parent pytest process before any fixture of the
test is set up and before any rank starts; a refusal raises
:class:`~._errors.RanksMarkerError`, an :class:`onesided.ArgumentError`
(:class:`~._errors.RanksMarkerTypeError`, an
:class:`onesided.ArgumentTypeError`, for a value of the wrong type) naming
the test, the argument and the rule.
"""

from __future__ import annotations

import inspect
import pickle
import unittest
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NoReturn

import pytest

MARKER = "ranks"

DEFAULT_TIMEOUT = 120.0
"""Seconds the ranks get when neither the marker nor pytest-timeout says."""

RANK_FIXTURES = frozenset({"tmp_path"})
"""Fixtures a marked test may take. ``tmp_path`` is made by the parent, once:
every rank gets the same directory."""

MARKER_HELP = (
    f"{MARKER}(n, *, timeout=None): run the test function on n onesided ranks (new processes whose "
    "onesided.COMM_WORLD spans them) instead of in this process; timeout in seconds (default: the test's "
    f"pytest-timeout timeout, else {DEFAULT_TIMEOUT:g}). The test may take parametrize arguments and tmp_path."
)


@dataclass(frozen=True)
class Ranks:
    """A parsed ``ranks`` marker."""

    n: int
    timeout: float | None


def refuse(where: str, rule: str, *, wrong_type: bool = False) -> NoReturn:
    """Raise the onesided error for a misused marker, naming ``where`` and the rule broken."""
    __tracebackhide__ = True
    from ._errors import RanksMarkerError, RanksMarkerTypeError

    raise (RanksMarkerTypeError if wrong_type else RanksMarkerError)(f"@pytest.mark.{MARKER} on {where}: {rule}")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def parse(marker: pytest.Mark, where: str) -> Ranks:
    """Read ``ranks(n, *, timeout=None)``: ``n`` a positive int, ``timeout`` positive seconds."""
    __tracebackhide__ = True
    if len(marker.args) != 1:
        refuse(where, f"takes one positional argument, the number of ranks n; got {len(marker.args)}")
    n = marker.args[0]
    if not isinstance(n, int) or isinstance(n, bool):
        refuse(where, f"n must be an int, got {type(n).__name__} {n!r}", wrong_type=True)
    if n < 1:
        refuse(where, f"n must be at least 1, got {n}")
    unknown = sorted(set(marker.kwargs) - {"timeout"})
    if unknown:
        refuse(where, f"unknown keyword argument {unknown[0]!r} (ranks takes n and timeout)")
    timeout = marker.kwargs.get("timeout")
    if timeout is not None:
        if not _is_number(timeout):
            refuse(where, f"timeout must be a number of seconds, got {type(timeout).__name__} {timeout!r}",
                   wrong_type=True)
        if not timeout > 0:
            refuse(where, f"timeout must be positive, got {timeout!r}")
    return Ranks(n, None if timeout is None else float(timeout))


def marked(obj: object) -> bool:
    """Whether ``obj`` (a function or class) carries the marker itself."""
    try:
        marks = vars(obj).get("pytestmark", [])
    except TypeError:  # no __dict__
        return False
    return any(getattr(mark, "name", None) == MARKER for mark in (marks if isinstance(marks, list) else [marks]))


def _split_names(argnames: object) -> list[str]:
    if isinstance(argnames, str):
        return [name.strip() for name in argnames.split(",") if name.strip()]
    return list(argnames) if isinstance(argnames, Iterable) else []


def direct_parameters(item: pytest.Function) -> set[str]:
    """Names given their values by ``@pytest.mark.parametrize`` without
    ``indirect``: plain values, computed at collection, that can travel."""
    names: set[str] = set()
    for mark in item.iter_markers("parametrize"):
        argnames = _split_names(mark.args[0] if mark.args else mark.kwargs.get("argnames", ()))
        indirect = mark.args[2] if len(mark.args) > 2 else mark.kwargs.get("indirect", False)
        if indirect is True:
            continue
        names.update(n for n in argnames if not (isinstance(indirect, (list, tuple)) and n in indirect))
    return names


def check_runnable(item: pytest.Item, where: str) -> None:
    """Refuse a marked test that the ranks cannot run as pytest would."""
    __tracebackhide__ = True
    if not isinstance(item, pytest.Function):
        refuse(where, f"only test functions and methods can run on ranks, not a {type(item).__name__}")
    if item.cls is not None and issubclass(item.cls, unittest.TestCase):
        refuse(where, "unittest.TestCase methods cannot run on ranks (their set-up runs in this process)")
    if inspect.iscoroutinefunction(item.obj):
        refuse(where, "async test functions cannot run on ranks")
    for mark in item.iter_markers("xfail"):
        if mark.kwargs.get("raises") is not None:
            refuse(where, "xfail(raises=...) cannot be checked: the exception is raised on a rank, "
                          "and only its report comes back; use xfail without raises")
    parameters = direct_parameters(item)
    for name in item._fixtureinfo.argnames:
        if name in parameters:
            _check_picklable(item.callspec.params[name], name, where)
        elif name not in RANK_FIXTURES:
            refuse(where, f"argument {name!r} is a fixture (or an indirect parameter); fixtures run in this "
                          f"process and cannot reach the ranks. A marked test may take @pytest.mark.parametrize "
                          f"arguments and {', '.join(sorted(RANK_FIXTURES))} only")


def _check_picklable(value: object, name: str, where: str) -> None:
    """The ranks receive the test's arguments pickled."""
    __tracebackhide__ = True
    try:
        pickle.dumps(value)
    except Exception as exc:
        problem = f"{type(exc).__name__}: {exc}"
    else:
        return
    refuse(where, f"argument {name!r} cannot be sent to the ranks ({problem})")
