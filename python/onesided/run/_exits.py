"""How the launcher reads a rank's end: its shell-style status, the words
that say it, and whether a process has ended before its waiting thread
has reported it."""

from __future__ import annotations

import signal
import subprocess

__all__ = ["describe_exit", "ended", "exit_status"]


def exit_status(returncode: int) -> int:
    """Map a Popen returncode to a shell-style status (signal S gives 128+S)."""
    return returncode if returncode >= 0 else 128 - returncode


def describe_exit(returncode: int) -> str:
    if returncode >= 0:
        return f"exited with status {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:  # e.g. a real-time signal without a name
        name = f"signal {-returncode}"
    return f"was killed by {name} (status {128 - returncode})"


def ended(proc: subprocess.Popen[bytes]) -> bool:
    """Whether ``proc`` has ended, reaped or not yet (a zombie: its waiting
    thread has not run since)."""
    if proc.returncode is not None:
        return True
    try:
        with open(f"/proc/{proc.pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] in ("Z", "X")
    except OSError:
        return True  # reaped between the two looks
