"""Strided accumulate-style calls of a native dtype on the provider path go
as vectored atomics, several stretches of the target per operation
(docs/atomics.md, "Strided atomics"), and change exactly the elements of
the layout, with every old value returned in place
(tests/ranks/vectored_atomics.py)."""

from __future__ import annotations

import re

import pytest

from conftest import run_ranks

# libfabric's shm provider (the shared-memory path off) and tcp;ofi_rxm:
# each takes 4 stretches per vectored operation in libfabric 1.20.
PROVIDERS = {"shm": ("shm", {"ONESIDED_SHARED_MEMORY": "off"}), "tcp": ("tcp;ofi_rxm", {})}


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_strided_native_atomics_go_vectored_and_exact(provider: str) -> None:
    name, env = PROVIDERS[provider]
    out = run_ranks("vectored_atomics.py", 2, provider=name, env=env, timeout=120)
    found = re.search(r"^PASS vectored stretches=(\d+) cases=(\d+)$", out.stdout, re.M)
    assert found, out.stdout
    assert int(found.group(1)) > 1, out.stdout  # the vectored form was found faithful and is used
    assert int(found.group(2)) == 2 * 3 * (3 * 4 + 2), out.stdout  # dtypes x layouts x (op, fetch, step)
