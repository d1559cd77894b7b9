"""What a process holds, as the process itself can see it in /proc: the
per-window costs figure 6 reports (threads, file descriptors, /dev/shm
entries, resident memory).

Everything is read from the process's own /proc entries, so it counts
whatever any library in the process holds (onesided, the MPI library, the
libfabric they load); figure 6 reports differences between snapshots taken
around one library's windows, which is what those windows cost.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

SHM = "/dev/shm/"

# An entry of /dev/shm: (device, inode), the same on every rank of one host.
ShmKey = tuple[int, int]


@dataclass
class ShmEntry:
    """One /dev/shm file a process maps or holds open: its name (``(deleted)``
    once unlinked), its size and the bytes tmpfs has allocated to it."""

    path: str
    size: int
    allocated: int


@dataclass
class Snapshot:
    """One process at one moment."""

    threads: int  # entries of /proc/self/task
    fds: int  # entries of /proc/self/fd
    rss: int  # resident bytes (/proc/self/statm)
    shm: dict[ShmKey, ShmEntry] = field(default_factory=dict)


def _shm_mapped(shm: dict[ShmKey, ShmEntry]) -> None:
    """Add the /dev/shm files the process maps. An unlinked file has no name
    to stat, so its mapping is stat'ed through /proc/self/map_files (which
    needs CAP_SYS_ADMIN); without it, the file counts as the mapping's
    length, allocated or not, keyed by the device and inode /proc/self/maps
    prints."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            parts = line.split(maxsplit=5)
            if len(parts) < 6 or not parts[5].startswith(SHM):
                continue
            span, path = parts[0], parts[5].rstrip("\n")
            try:
                st = os.stat(f"/proc/self/map_files/{span}")
            except OSError:
                lo, hi = (int(x, 16) for x in span.split("-"))
                major, minor = (int(x, 16) for x in parts[3].split(":"))
                shm.setdefault((os.makedev(major, minor), int(parts[4])), ShmEntry(path, hi - lo, hi - lo))
                continue
            shm[(st.st_dev, st.st_ino)] = ShmEntry(path, st.st_size, st.st_blocks * 512)


def _shm_open(shm: dict[ShmKey, ShmEntry]) -> None:
    """Add the /dev/shm files the process holds a descriptor to (Open MPI
    and UCX keep some open without mapping them all)."""
    for fd in os.listdir("/proc/self/fd"):
        link = f"/proc/self/fd/{fd}"
        try:
            path = os.readlink(link)
            if not path.startswith(SHM):
                continue
            st = os.stat(link)  # follows the magic link to the file, unlinked or not
        except OSError:
            continue  # closed meanwhile (the listing's own descriptor)
        shm.setdefault((st.st_dev, st.st_ino), ShmEntry(path, st.st_size, st.st_blocks * 512))


def snapshot() -> Snapshot:
    """This process's threads, descriptors, resident bytes and /dev/shm
    files now."""
    with open("/proc/self/statm") as statm:
        rss = int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    shm: dict[ShmKey, ShmEntry] = {}
    _shm_mapped(shm)
    _shm_open(shm)
    return Snapshot(len(os.listdir("/proc/self/task")), len(os.listdir("/proc/self/fd")), rss, shm)


@dataclass
class JobSnapshot:
    """A collective snapshot, on rank 0: rank 0's process (threads,
    descriptors, resident bytes) and the /dev/shm files any rank of the job
    maps or holds open (each file once)."""

    threads: int
    fds: int
    rss: int
    shm_entries: int
    shm_bytes: int  # the files' sizes
    shm_allocated: int  # what tmpfs has allocated to them

    def minus(self, other: "JobSnapshot") -> dict[str, int]:
        """Each count of this snapshot less ``other``'s, by name."""
        return {name: getattr(self, name) - getattr(other, name) for name in RESOURCES}


RESOURCES = ("threads", "fds", "rss", "shm_entries", "shm_bytes", "shm_allocated")


def job_snapshot(comm: Any) -> JobSnapshot | None:
    """Collective over ``comm``: every rank takes its snapshot (after a
    barrier, so no rank is still inside the previous collective call), and
    rank 0 gets the result; None on the other ranks."""
    comm.Barrier()
    mine = snapshot()
    every = comm.gather(mine.shm, root=0)
    if comm.rank != 0:
        return None
    files: dict[ShmKey, ShmEntry] = {}
    for shm in every:
        files.update(shm)
    return JobSnapshot(mine.threads, mine.fds, mine.rss, len(files), sum(e.size for e in files.values()),
                       sum(e.allocated for e in files.values()))
