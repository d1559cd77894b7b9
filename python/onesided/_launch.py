"""``python -m onesided run``: start N ranks and supervise them.

The launcher starts a :class:`~onesided._coordinator.Coordinator` thread (the
server side of the wire protocol documented in :mod:`onesided._world`), then
one child process per rank, each in its own session so that stopping a rank's
process group also stops whatever it spawned.  Children inherit stdout and
stderr.

Guarantees of :func:`run`
-------------------------
* It returns 0 if every rank exits 0.  Otherwise it returns the status of the
  first rank to fail (128+S for a rank killed by signal S) and names that rank
  on stderr.  "First" is the order in which ranks departed: said bye, lost
  their coordinator connection or exited, whichever happened first.  So a
  rank that fails only because another one left before it is not blamed.
* The first failure, the ``timeout`` or a SIGINT/SIGTERM to the launcher stops
  the job: SIGTERM (or the launcher's signal) goes to every rank's process
  group, except ranks already exiting on their own; SIGKILL follows
  :data:`GRACE_SECONDS` later, and once the ranks are reaped their groups get
  SIGKILL too, for descendants that outlived them.  A second SIGINT/SIGTERM
  sends SIGKILL at once.  A timeout returns 124, a signal S 128+S.
* It returns only after reaping every rank, unless a rank survives SIGKILL
  for 5 s (uninterruptible sleep), which is reported and abandoned.
* Waiting is driven by events (child exits, signals, deadlines); nothing polls.
"""

from __future__ import annotations

import argparse
import os
import queue
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType

from ._coordinator import Coordinator
from ._world import ENV_COORD, ENV_RANK, ENV_SIZE, ENV_TOKEN

__all__ = ["GRACE_SECONDS", "add_arguments", "main", "run"]

GRACE_SECONDS = 2.0
"""How long stopped ranks get between the first signal and SIGKILL."""

_REAP_SECONDS = 5.0
"""How long to wait for SIGKILLed ranks before giving up on them (D state)."""


def _remove_stale_shared_memory() -> None:
    """Ranks that were killed (by a signal, or by this launcher stopping the
    job) leave libfabric's and onesided's /dev/shm entries behind: remove
    those whose owner no longer exists. The core is imported only here, so
    the launcher itself starts without libfabric."""
    try:
        from . import _core
    except ImportError:  # a launcher without the compiled core: nothing to sweep
        return
    _core.remove_stale_shared_memory()


def _exit_status(returncode: int) -> int:
    """Map a Popen returncode to a shell-style status (signal S gives 128+S)."""
    return returncode if returncode >= 0 else 128 - returncode


def _describe_exit(returncode: int) -> str:
    if returncode >= 0:
        return f"exited with status {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:  # e.g. a real-time signal without a name
        name = f"signal {-returncode}"
    return f"was killed by {name} (status {128 - returncode})"


def _ranks(count: int) -> str:
    return f"{count} rank" if count == 1 else f"{count} ranks"


@dataclass(frozen=True)
class _Exited:
    rank: int
    returncode: int


@dataclass(frozen=True)
class _Signalled:
    signum: int


@dataclass
class _Blame:
    """A failed rank whose status waits for ranks that departed before it."""

    rank: int
    earlier: list[int]


class _Job:
    """One launch: spawns the ranks and reacts to their exits, signals and deadlines."""

    def __init__(self, size: int, command: list[str], timeout: float | None) -> None:
        self._size = size
        self._command = command
        self._timeout = timeout
        self._token = secrets.token_hex(16)
        self._coordinator = Coordinator(size, self._token.encode("ascii"))
        self._events: queue.SimpleQueue[_Exited | _Signalled] = queue.SimpleQueue()
        self._procs: list[subprocess.Popen[bytes]] = []
        self._running: dict[int, subprocess.Popen[bytes]] = {}
        self._returncodes: dict[int, int] = {}
        self._status: int | None = None
        self._blame: _Blame | None = None
        self._stopping = False
        self._killed = False
        self._deadline: float | None = None

    def run(self) -> int:
        """Run the job to completion and return its exit status."""
        with self._coordinator, self._forward_signals():
            self._spawn()
            if self._timeout is not None:
                self._deadline = time.monotonic() + self._timeout
            self._supervise()
        _remove_stale_shared_memory()
        return 0 if self._status is None else self._status

    @contextmanager
    def _forward_signals(self) -> Iterator[None]:
        """Turn SIGINT/SIGTERM into events while the job runs (main thread only)."""
        if threading.current_thread() is not threading.main_thread():
            yield  # signal handlers can only be set from the main thread
            return

        def on_signal(signum: int, frame: FrameType | None) -> None:
            self._events.put(_Signalled(signum))  # SimpleQueue.put is reentrant

        previous = {signum: signal.signal(signum, on_signal) for signum in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    def _spawn(self) -> None:
        address = self._coordinator.address
        try:
            for rank in range(self._size):
                env = dict(os.environ)
                env[ENV_COORD] = address
                env[ENV_RANK] = str(rank)
                env[ENV_SIZE] = str(self._size)
                env[ENV_TOKEN] = self._token
                # A new session per rank: killpg reaches its descendants, and
                # a terminal's Ctrl-C reaches only the launcher, which forwards it.
                proc = subprocess.Popen(self._command, env=env, start_new_session=True)
                self._procs.append(proc)
                self._running[rank] = proc
                threading.Thread(
                    target=self._wait_for, args=(rank, proc), name=f"onesided-rank-{rank}", daemon=True
                ).start()
        except BaseException:
            for proc in self._procs:
                self._signal_group(proc, signal.SIGKILL)
            for proc in self._procs:
                proc.wait()
            raise

    def _wait_for(self, rank: int, proc: subprocess.Popen[bytes]) -> None:
        self._events.put(_Exited(rank, proc.wait()))

    def _supervise(self) -> None:
        while self._running:
            remaining = None if self._deadline is None else max(0.0, self._deadline - time.monotonic())
            try:
                event = self._events.get(timeout=remaining)
            except queue.Empty:
                if not self._on_deadline():
                    return
                continue
            if isinstance(event, _Exited):
                self._on_exit(event.rank, event.returncode)
            else:
                self._on_signal(event.signum)
        if self._stopping:
            # The ranks are gone; descendants that ignored the first signal are not.
            for proc in self._procs:
                self._signal_group(proc, signal.SIGKILL)

    def _on_exit(self, rank: int, returncode: int) -> None:
        del self._running[rank]
        self._returncodes[rank] = returncode
        earlier = self._coordinator.rank_exited(rank, _describe_exit(returncode))
        if returncode != 0 and self._status is None and self._blame is None:
            # Ranks that departed earlier but are still running are exiting on
            # their own; their status decides who failed first, so they are
            # spared the stop signal.
            exiting = [r for r in earlier if r in self._running]
            self._blame = _Blame(rank, exiting)
            self._stop(signal.SIGTERM, spare=exiting)
        if self._blame is not None and not any(r in self._running for r in self._blame.earlier):
            self._settle_blame()

    def _settle_blame(self) -> None:
        """Fix the job status from the first failed departure known by now."""
        assert self._blame is not None
        failed = [r for r in self._blame.earlier if self._returncodes.get(r, 0) != 0]
        culprit = failed[0] if failed else self._blame.rank
        self._blame = None
        returncode = self._returncodes[culprit]
        self._status = _exit_status(returncode)
        others = len(self._running)
        stopping = f"; stopping the other {_ranks(others)}" if others else ""
        self._say(f"rank {culprit} {_describe_exit(returncode)}{stopping}")

    def _on_signal(self, signum: int) -> None:
        name = signal.Signals(signum).name
        if not self._stopping:
            self._status = 128 + signum
            self._say(f"received {name}; stopping {_ranks(len(self._running))}")
            self._stop(signum)
            return
        if self._blame is not None:
            self._settle_blame()
        if not self._killed:
            self._say(f"received {name} again; killing {_ranks(len(self._running))}")
            self._kill()

    def _on_deadline(self) -> bool:
        """Act on the expired deadline; return False to give up waiting."""
        if not self._stopping:
            self._status = 124
            self._say(f"timeout after {self._timeout:g} s; stopping {_ranks(len(self._running))}")
            self._stop(signal.SIGTERM)
        elif not self._killed:
            if self._blame is not None:
                self._settle_blame()
            self._kill()
        else:
            pids = ", ".join(f"rank {rank} (pid {proc.pid})" for rank, proc in sorted(self._running.items()))
            self._say(f"giving up on {pids}: still running after SIGKILL")
            return False
        return True

    def _stop(self, signum: int, spare: Sequence[int] = ()) -> None:
        """Send ``signum`` to every rank's group but ``spare``; SIGKILL follows later."""
        self._stopping = True
        self._deadline = time.monotonic() + GRACE_SECONDS
        for rank, proc in enumerate(self._procs):
            if rank not in spare:
                self._signal_group(proc, signum)

    def _kill(self) -> None:
        self._killed = True
        self._deadline = time.monotonic() + _REAP_SECONDS
        for proc in self._procs:
            self._signal_group(proc, signal.SIGKILL)

    @staticmethod
    def _signal_group(proc: subprocess.Popen[bytes], signum: int) -> None:
        # The group outlives a reaped rank while its descendants run, so
        # exited ranks are signalled too; a group that is gone is fine.
        try:
            os.killpg(proc.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass

    @staticmethod
    def _say(message: str) -> None:
        print(f"onesided run: {message}", file=sys.stderr, flush=True)


def run(n: int, argv: Sequence[str], *, timeout: float | None = None, module: bool = False) -> int:
    """Run ``argv`` (a script and its arguments) as ``n`` ranks; return the job status.

    With ``module`` the first item of ``argv`` is a module name, run like
    ``python -m``.  ``timeout`` bounds the whole job in seconds.  See the
    module docstring for the exit status and stopping guarantees.  SIGINT and
    SIGTERM are only intercepted when called from the main thread.
    """
    if n < 1:
        raise ValueError(f"need at least one rank, got {n}")
    if not argv:
        raise ValueError("nothing to run")
    if timeout is not None and timeout <= 0:
        raise ValueError(f"timeout must be positive, got {timeout}")
    command = [sys.executable, *(["-m"] if module else []), *argv]
    return _Job(n, command, timeout).run()


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the options of the ``run`` subcommand on ``parser``."""
    parser.add_argument("-n", "--np", type=_positive_int, required=True, metavar="N", help="number of ranks")
    parser.add_argument(
        "--timeout",
        type=_positive_float,
        metavar="SECONDS",
        help="stop the job and exit with 124 if it is still running after SECONDS",
    )
    parser.add_argument(
        "-m", dest="module", action="store_true", help="the program is a module name, run like python -m"
    )
    # One REMAINDER positional, so everything after the script (including
    # "--" and options the launcher also has) reaches the script untouched.
    parser.add_argument(
        "program", nargs=argparse.REMAINDER, metavar="script.py|module [args ...]", help="what each rank runs"
    )


def main(args: argparse.Namespace) -> int:
    """Handle ``run`` with arguments parsed by :func:`add_arguments`; return the exit status."""
    program = list(args.program)
    if program[:1] == ["--"]:
        program = program[1:]
    if not program:
        print("python -m onesided run: error: no script (or -m module) to run", file=sys.stderr)
        return 2
    return run(args.np, program, timeout=args.timeout, module=args.module)
