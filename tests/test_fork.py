"""fork() in a rank with a live window (issue 13, item 10). The child must
not share, ring or consume its parent's doorbell or progress state: it
leaves cleanly (os._exit, or sys.exit, which runs onesided's shutdown in a
process where the progress thread does not exist), leaves nothing in
/dev/shm, and the parent's window keeps working, its doorbell the same
one, still mapped by the other rank (tests/ranks/fork.py). The child's own
bell is tested in cpp/tests/test_doorbell.cpp."""

from __future__ import annotations

import os
import re

import pytest

from conftest import run_ranks


@pytest.mark.parametrize("how", ["_exit", "exit"])
@pytest.mark.parametrize("path", ["shared", "provider"])
def test_a_forked_child_leaves_the_parents_window_working(path: str, how: str) -> None:
    out = run_ranks("fork.py", 2, path, how, timeout=60)
    assert out.stdout.count("PARENT OK") == 2, out.stdout + out.stderr
    # Not anchored: the launcher passes the two ranks' output through as it
    # comes, so one rank's line can land in the middle of the other's.
    children = re.findall(r"CHILD (\d+) STATUS 0(?!\d)", out.stdout)
    assert len(children) == 2, out.stdout + out.stderr
    left = [n for n in os.listdir("/dev/shm") for c in children if c in n.replace(":", "-").split("-")]
    assert left == [], f"the children left {left} in /dev/shm"
