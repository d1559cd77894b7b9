"""pytest plugin: ``@pytest.mark.ranks(N)`` runs a test function on N onesided ranks.

Installed with onesided and loaded by pytest through its ``pytest11`` entry
point (or ``-p pytest_onesided``; both at once is harmless: the entry point
has the module's name, so pytest loads it once). See docs/testing.md.

This module imports only pytest and the standard library: a session whose
tests carry no ``ranks`` marker never imports onesided (nor libfabric). The
hooks below wire the three steps together:

* collection: the marker on a function or class pytest does not collect as
  a test is an error (it would silently never run);
* set-up: the marker and the test are checked (:mod:`._marker`) before any
  fixture is made;
* call: the ranks run the test (:mod:`._in_ranks`); this process does not.

The timeout is the marker's ``timeout=``, else the test's pytest-timeout
timeout (marker, ``--timeout``, ini, ``PYTEST_TIMEOUT``), else
:data:`._marker.DEFAULT_TIMEOUT`; the launcher enforces it on the ranks, and
pytest-timeout's own timer is not armed for marked tests (it would stop this
process while the ranks run on).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from ._marker import DEFAULT_TIMEOUT, MARKER, MARKER_HELP, Ranks, check_runnable, marked, parse, refuse

_RANKS = pytest.StashKey[Ranks]()
_PYTEST_TIMEOUT = pytest.StashKey[float]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)


@pytest.hookimpl(wrapper=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> Generator[None, Any, Any]:
    collected = yield
    if collected is None and marked(obj):
        refuse(f"{name} in {collector.nodeid}", "pytest does not collect it as a test (see python_functions "
                                                "and python_classes), so it would never run on ranks")
    return collected


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    marker = item.get_closest_marker(MARKER)
    if marker is None:
        return
    __tracebackhide__ = True
    ranks = parse(marker, item.nodeid)
    check_runnable(item, item.nodeid)
    item.stash[_RANKS] = ranks


@pytest.hookimpl(optionalhook=True)
def pytest_timeout_set_timer(item: pytest.Item, settings: Any) -> bool | None:
    """pytest-timeout's timeout of a marked test goes to the ranks, not to a timer here."""
    if item.get_closest_marker(MARKER) is None:
        return None
    item.stash[_PYTEST_TIMEOUT] = float(settings.timeout)
    return True


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    ranks = pyfuncitem.stash.get(_RANKS, None)
    if ranks is None:
        return None
    from ._in_ranks import run

    timeout = ranks.timeout or pyfuncitem.stash.get(_PYTEST_TIMEOUT, None) or DEFAULT_TIMEOUT
    run(pyfuncitem, ranks.n, timeout)
    return True
