"""The errors a misused ``ranks`` marker raises.

Imported only when one is raised, since it imports onesided (and with it the
core): the plugin itself costs nothing to a session that does not need it.
"""

from __future__ import annotations

import pytest

from onesided import ArgumentError, ArgumentTypeError


class RanksMarkerError(ArgumentError, pytest.Collector.CollectError):
    """``@pytest.mark.ranks`` where it cannot work: on something pytest does
    not collect as a test, with arguments it does not take, or on a test the
    ranks cannot run as pytest would. A ``CollectError`` too, so that pytest
    reports it at collection by its message alone."""


class RanksMarkerTypeError(ArgumentTypeError, RanksMarkerError):
    """A ``ranks`` marker argument of the wrong type."""
