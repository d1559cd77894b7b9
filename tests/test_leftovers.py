"""Nothing of onesided's stays in /dev/shm when a rank is SIGKILLed, under
mpiexec, where no onesided launcher sweeps after the job (issue 25, item 5):
onesided's shared memory (window segments, lock words, notification
counters, doorbells) is memfd memory that no file system names, so it goes
with the last process that maps it (docs/semantics.md, "What a dead rank
leaves"). libfabric's shm provider still names its regions
/dev/shm/<pid>:<n>:<n>; those of dead processes are swept by the next
onesided process (remove_stale_shared_memory), checked last here."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import onesided
from conftest import run_ranks

# Each flavor that shares memory between ranks on one host, and how many
# nameless onesided mappings each rank has at least: its own doorbell and
# the other rank's, plus the segment where there is one (and, for Create
# over Alloc_mem, its own block and the other rank's).
FLAVORS = {"allocate": 3, "allocate_shared": 3, "create": 3, "create_alloc_mem": 5, "dynamic": 3}


def onesided_names(pids: list[str]) -> list[str]:
    """/dev/shm entries in onesided's old names (onesided-<pid>-..., onesided-bell-<pid>) for ``pids``."""
    return [n for n in os.listdir("/dev/shm") if n.startswith("onesided-") for p in pids if p in n.split("-")]


def libfabric_names(pids: list[str]) -> list[str]:
    return [n for n in os.listdir("/dev/shm") for p in pids if n.startswith(f"{p}:")]


@pytest.mark.parametrize("notify", ["0", "1"])
@pytest.mark.parametrize("flavor", list(FLAVORS))
def test_a_killed_rank_under_mpiexec_leaves_nothing_of_onesided(flavor: str, notify: str, tmp_path: Path) -> None:
    out = run_ranks("leftovers.py", 2, flavor, notify, str(tmp_path), launcher="mpiexec", timeout=60, check=False)
    reports = "".join(p.read_text() for p in sorted(tmp_path.glob("rank*.txt")))
    text = f"{reports}\n{out.stdout}\n{out.stderr}"
    pids = re.findall(r"^PID (\d+)", reports, re.M)
    assert len(pids) == 2, text
    assert out.returncode != 0, text  # rank 1's death ended the job
    assert re.search(r"^NAMED $", reports, re.M), f"onesided names existed while the job ran\n{text}"
    mapped = [int(n) for n in re.findall(r"^MEMFD (\d+)", reports, re.M)]
    assert len(mapped) == 2 and min(mapped) >= FLAVORS[flavor], f"the window shared no memfd memory\n{text}"
    # No sweep first: whatever onesided named would still be here (unless
    # another onesided process of this user swept meanwhile, which is why
    # the NAMED look while the job ran is the check that cannot be masked).
    assert onesided_names(pids) == [], f"left in /dev/shm\n{text}"
    # libfabric's regions of the killed rank stay until a sweep removes them.
    onesided._core.remove_stale_shared_memory()
    assert libfabric_names(pids) == [], "libfabric's regions outlived the sweep"
