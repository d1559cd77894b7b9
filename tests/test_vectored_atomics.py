"""Strided accumulate-style calls on the provider path move many pieces per
operation (docs/atomics.md, "Strided atomics"): of a native dtype as
vectored atomics, of a software dtype as piece-run messages. Either way
they change exactly the elements of the layout, with every old value
returned in place (tests/ranks/vectored_atomics.py)."""

from __future__ import annotations

import re

import pytest

from conftest import run_ranks

# libfabric's shm provider (the shared-memory path off) and tcp;ofi_rxm:
# each takes 4 stretches per vectored operation in libfabric 1.20.
PROVIDERS = {"shm": ("shm", {"ONESIDED_SHARED_MEMORY": "off"}), "tcp": ("tcp;ofi_rxm", {})}
CASES = 2 * 3 * (3 * 4 + 2)  # dtypes x layouts x (op, fetch, step)


@pytest.mark.parametrize("route", ["native", "software", "granular"])
@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_strided_atomics_are_exact_on_every_route(provider: str, route: str) -> None:
    name, env = PROVIDERS[provider]
    out = run_ranks("vectored_atomics.py", 2, route, provider=name, env=env, timeout=120)
    found = re.search(rf"^PASS {route} stretches=(\d+) cases=(\d+)$", out.stdout, re.M)
    assert found, out.stdout
    assert int(found.group(2)) == CASES, out.stdout
    if route == "native":
        assert int(found.group(1)) > 1, out.stdout  # the vectored form was found faithful and is used
