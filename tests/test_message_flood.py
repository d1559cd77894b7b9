"""Thousands of software atomics in flight to one target complete at the
next Flush on every provider (tests/ranks/message_flood.py): a send the
provider cannot take yet waits, and never holds back the receives the
other side's progress needs (transport/fabric_transport.cpp,
post_receive)."""

from __future__ import annotations

import pytest

from conftest import run_ranks

PROVIDERS = {"shm": ("shm", {"ONESIDED_SHARED_MEMORY": "off"}), "tcp": ("tcp;ofi_rxm", {})}


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_thousands_of_software_atomics_in_flight_complete(provider: str) -> None:
    name, env = PROVIDERS[provider]
    out = run_ranks("message_flood.py", 2, "20000", provider=name, env=env, timeout=60)
    assert "PASS flood 20000" in out.stdout, out.stdout
