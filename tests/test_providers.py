"""Providers onesided does not pick itself but a user may (issue 15 item 5):
each either works or raises a clear error at creation, never crashes."""

from __future__ import annotations

import os
import subprocess
import sys

PROGRAM = """
import numpy as np, onesided
w = onesided.Window.Allocate(64, disp_unit=8, info={"onesided_shared_memory": "off"})
one, got = np.ones(1, np.int64), np.zeros(1, np.int64)
with w.lock_all():
    for i in range(3):
        w.Fetch_and_op(one, got, 0)
        w.Flush(0)
        assert got[0] == i, got
print("ATOMICS", w.info["atomics"], w.atomics["sum", "int64"].reason)
w.Free()
"""


def test_udp_rxd_works_with_software_atomics() -> None:
    """libfabric 1.17's rxd crashes on a loopback atomic: onesided must not
    probe it, and the window must still be exact (software atomics)."""
    env = dict(os.environ, FI_PROVIDER="udp;ofi_rxd")
    out = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "ATOMICS software" in out.stdout and "not probed" in out.stdout, out.stdout
