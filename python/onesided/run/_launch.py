"""``python -m onesided run``: start N ranks and supervise them.

The launcher starts a :class:`~onesided.comm._coordinator.Coordinator` thread (the
server side of the wire protocol documented in :mod:`onesided.comm._comm`), then
one child process per rank, each in its own session so that stopping a rank's
process group also stops whatever it spawned.

Output: each rank's stdout and stderr are pipes that one thread of the
launcher reads (:mod:`onesided.run._output`) and relays as whole lines, a
rank's stdout to the launcher's stdout and its stderr to the launcher's
stderr, with ``[R] `` before every line under ``--tag-output``; or, with
``--output-dir DIR``, they are the files ``DIR/rank.R.stdout`` and
``DIR/rank.R.stderr``, holding exactly the rank's bytes. Ranks run with
``PYTHONUNBUFFERED=1`` unless it is set: a print leaves the rank at once,
as on a terminal, so a rank stopped by a signal has lost nothing it
printed, and the relay makes the lines whole again.

Across hosts (``--hosts``, ``--hostfile``, or the nodes of the Slurm
allocation it runs in; placement in :mod:`onesided.run._hosts`) a rank on
another host is started through a remote shell (``ssh`` by default, ``srun``
inside Slurm, any command by ``--rsh``) as the agent
:mod:`onesided.run._remote_rank`, which receives the rank's command, environment
(this one's, but for a few per-session variables) and working directory on
its stdin, runs the rank there and forwards the launcher's signals to it.
The coordinator then listens on an address the other hosts reach, and the
remote shell's exit status is the rank's.  Everything below holds for
remote ranks as for local ones; the remote shell carries their output (its
stdout and stderr are relayed, or written to the rank's files, as a local
rank's are).

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
* A rank's output is relayed before the launcher reports its exit, and
  every pipe is read to its end before :func:`run` returns, so the last
  lines of ranks that were stopped are not lost. Only a pipe that a
  process the rank started keeps open (it outlived the rank, in another
  session) is given up :data:`GRACE_SECONDS` after the last rank's exit,
  and named.
* Waiting is driven by events (child exits, signals, deadlines); nothing polls.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import secrets
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import IO

from ..comm._comm import ENV_COORD, ENV_RANK, ENV_SIZE, ENV_TOKEN
from ..comm._coordinator import Coordinator
from ._exits import describe_exit, ended, exit_status
from ._hosts import (
    HostSlots,
    coordinator_address,
    interface_toward,
    is_local,
    parse_hosts,
    placement,
    read_hostfile,
    slurm_hosts,
)
from ._output import OutputRelay
from ._slurm import SLURM_RSH, node_addresses

__all__ = ["DEFAULT_RSH", "GRACE_SECONDS", "SLURM_RSH", "add_arguments", "main", "remote_command", "run"]

GRACE_SECONDS = 2.0
"""How long stopped ranks get between the first signal and SIGKILL."""

_REAP_SECONDS = 5.0
"""How long to wait for SIGKILLed ranks before giving up on them (D state)."""

DEFAULT_RSH = ("ssh", "-x", "-o", "BatchMode=yes")
"""The remote shell: run as ``RSH HOST WORD...``, the words forming one shell
command line (ssh joins them for the remote shell); BatchMode fails at once
where ssh would ask for a password."""

ENV_TCP_IFACE = "FI_TCP_IFACE"

_OUTPUT_AFTER_EXIT_SECONDS = 1.0
"""How long a rank's exit waits for its output to be relayed, which takes
longer only when a process it started still holds its pipes."""

_SESSION_VARIABLES = frozenset(
    {"HOSTNAME", "PWD", "OLDPWD", "SHLVL", "_", "SSH_CLIENT", "SSH_CONNECTION", "SSH_TTY", "SSH_AUTH_SOCK", "TMUX"}
)
"""Not carried to other hosts: they describe this login session, not the job."""


def _remove_stale_shared_memory() -> None:
    """Ranks that were killed (by a signal, or by this launcher stopping the
    job) leave libfabric's and onesided's /dev/shm entries behind: remove
    those whose owner no longer exists. The core is imported only here, so
    the launcher itself starts without libfabric."""
    try:
        from .. import _core
    except ImportError:  # a launcher without the compiled core: nothing to sweep
        return
    _core.remove_stale_shared_memory()


def _ranks(count: int) -> str:
    return f"{count} rank" if count == 1 else f"{count} ranks"


def remote_command(rsh: Sequence[str], host: str, words: Sequence[str]) -> list[str]:
    """The command that runs ``words`` (already quoted for a shell) on ``host``:
    ``rsh`` with ``{host}``/``{command}`` filled in, else ``RSH HOST WORD...``."""
    if not any("{host}" in word or word == "{command}" for word in rsh):
        return [*rsh, host, *words]
    line = " ".join(words)
    command = [line if word == "{command}" else word.replace("{host}", host) for word in rsh]
    return command if "{command}" in rsh else [*command, *words]


def _agent_words(environ: dict[str, str]) -> list[str]:
    """The agent's command line on the remote host: this interpreter's path,
    with this PYTHONPATH so that it finds the same onesided."""
    words = [sys.executable, "-m", "onesided.run._remote_rank"]
    if environ.get("PYTHONPATH"):
        words = ["env", f"PYTHONPATH={environ['PYTHONPATH']}", *words]
    return [shlex.quote(word) for word in words]


@dataclass
class _Rank:
    """A started rank: its process here, or the remote shell carrying its agent."""

    proc: subprocess.Popen[bytes]
    host: str | None  # None: this machine

    def send(self, signum: int) -> None:
        """Send ``signum`` to the rank's process group, wherever it runs."""
        if self.host is None or self.proc.stdin is None:
            self.kill_group(signum)
            return
        try:
            # The agent forwards it; SIGKILL also ends its input, so an agent
            # that missed the line still stops the rank.
            self.proc.stdin.write(f"{signum}\n".encode())
            self.proc.stdin.flush()
            if signum == signal.SIGKILL:
                self.proc.stdin.close()
        except (OSError, ValueError):
            pass  # the remote shell is gone; its exit is (or will be) reported

    def kill_group(self, signum: int = signal.SIGKILL) -> None:
        """Signal the local process group (the rank's, or its remote shell's)."""
        # The group outlives a reaped process while its descendants run, so
        # exited ranks are signalled too; a group that is gone is fine.
        try:
            os.killpg(self.proc.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass

    def where(self) -> str:
        return "" if self.host is None else f" (on {self.host})"


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

    def __init__(
        self,
        size: int,
        command: list[str],
        timeout: float | None,
        hosts: Sequence[str | None],
        rsh: Sequence[str],
        coordinator: str,
        tag_output: bool = False,
        output_dir: Path | None = None,
    ) -> None:
        self._size = size
        self._command = command
        self._timeout = timeout
        self._hosts = list(hosts)
        self._rsh = list(rsh)
        self._token = secrets.token_hex(16)
        self._coordinator = Coordinator(size, self._token.encode("ascii"), coordinator)
        self._events: queue.SimpleQueue[_Exited | _Signalled] = queue.SimpleQueue()
        self._procs: list[_Rank] = []
        self._running: dict[int, _Rank] = {}
        self._returncodes: dict[int, int] = {}
        self._status: int | None = None
        self._blame: _Blame | None = None
        self._stopping = False
        self._killed = False
        self._sent: set[int] = set()  # the signals this launcher sent its ranks
        self._deadline: float | None = None
        self._output_dir = output_dir
        self._output = OutputRelay(tag_output)

    def run(self) -> int:
        """Run the job to completion and return its exit status."""
        try:
            with self._coordinator, self._forward_signals():
                self._spawn()
                if self._timeout is not None:
                    self._deadline = time.monotonic() + self._timeout
                self._supervise()
        finally:
            abandoned = self._output.finish(GRACE_SECONDS)
        if abandoned:
            self._say(f"not waiting for {', '.join(abandoned)}: held open by a process that outlived the rank")
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
        # Across hosts, libfabric's tcp gets the interface the hosts reach
        # each other on (the one carrying the coordinator's address here,
        # the one routing to it elsewhere: _remote_rank), unless told one.
        spans_hosts = any(self._hosts)
        iface = interface_toward(address.rpartition(":")[0].strip("[]")) if spans_hosts else None
        try:
            for rank, host in enumerate(self._hosts):
                env = dict(os.environ)
                if iface and not host and ENV_TCP_IFACE not in env:
                    env[ENV_TCP_IFACE] = iface
                env[ENV_COORD] = address
                env[ENV_RANK] = str(rank)
                env[ENV_SIZE] = str(self._size)
                env[ENV_TOKEN] = self._token
                env.setdefault("PYTHONUNBUFFERED", "1")  # see the module docstring
                with self._output_files(rank) as (out, err):
                    # A new session per rank: killpg reaches its descendants, and
                    # a terminal's Ctrl-C reaches only the launcher, which forwards it.
                    proc = self._start_remote(host, env, out, err) if host else self._start_local(env, out, err)
                started = _Rank(proc, host)
                self._procs.append(started)
                self._running[rank] = started
                relayed = self._output.add(rank, proc.stdout, proc.stderr)
                threading.Thread(
                    target=self._wait_for, args=(rank, proc, relayed), name=f"onesided-rank-{rank}", daemon=True
                ).start()
        except BaseException:
            for started in self._procs:
                started.send(signal.SIGKILL)
                started.kill_group()
            for started in self._procs:
                started.proc.wait()
            raise

    @contextmanager
    def _output_files(self, rank: int) -> Iterator[tuple[IO[bytes] | int, IO[bytes] | int]]:
        """The rank's stdout and stderr: its files in the output directory
        (closed here once the rank has them), else pipes to the relay."""
        if self._output_dir is None:
            yield subprocess.PIPE, subprocess.PIPE
            return
        with open(self._output_dir / f"rank.{rank}.stdout", "wb") as out:
            with open(self._output_dir / f"rank.{rank}.stderr", "wb") as err:
                yield out, err

    def _start_local(self, env: dict[str, str], out: IO[bytes] | int, err: IO[bytes] | int) -> subprocess.Popen[bytes]:
        return subprocess.Popen(self._command, env=env, stdout=out, stderr=err, start_new_session=True)

    def _start_remote(
        self, host: str, env: dict[str, str], out: IO[bytes] | int, err: IO[bytes] | int
    ) -> subprocess.Popen[bytes]:
        """Start the agent on ``host`` and hand it the rank (see _remote_rank)."""
        command = remote_command(self._rsh, host, _agent_words(env))
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=out, stderr=err, start_new_session=True)
        assert proc.stdin is not None
        carried = {name: value for name, value in env.items() if name not in _SESSION_VARIABLES}
        spec = {"argv": self._command, "env": carried, "cwd": os.getcwd(), "choose_tcp_iface": ENV_TCP_IFACE not in env}
        try:
            proc.stdin.write(json.dumps(spec).encode() + b"\n")
            proc.stdin.flush()
        except OSError:
            pass  # the remote shell failed to start the agent; its exit says so
        return proc

    def _wait_for(self, rank: int, proc: subprocess.Popen[bytes], relayed: threading.Event) -> None:
        returncode = proc.wait()
        relayed.wait(_OUTPUT_AFTER_EXIT_SECONDS)  # the rank's last words before the launcher's report
        self._events.put(_Exited(rank, returncode))

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
            for started in self._procs:
                started.kill_group()
        for started in self._procs:
            if started.proc.stdin is not None:
                try:
                    started.proc.stdin.close()
                except OSError:
                    pass  # unflushed signal lines to an agent that is gone

    def _on_exit(self, rank: int, returncode: int) -> None:
        del self._running[rank]
        self._returncodes[rank] = returncode
        earlier = self._coordinator.rank_exited(rank, describe_exit(returncode))
        if returncode != 0 and self._status is None and self._blame is None:
            # Ranks that departed earlier but are still running are exiting on
            # their own; their status decides who failed first, so they are
            # spared the stop signal.
            # So are ranks whose process has ended already (their event waits
            # for their last output): a rank that onesided saw die (a killed
            # peer) raises within 100 ms and may be reported first, but the
            # death it reports ended before it.
            gone = [r for r in self._running if ended(self._procs[r].proc)]
            exiting = gone + [r for r in earlier if r in self._running and r not in gone]
            self._blame = _Blame(rank, exiting)
            self._stop(signal.SIGTERM, spare=exiting)
        if self._blame is not None and not any(r in self._running for r in self._blame.earlier):
            self._settle_blame()

    def _settle_blame(self) -> None:
        """Fix the job status from the first failed departure known by now."""
        assert self._blame is not None
        failed = [r for r in (*self._blame.earlier, self._blame.rank) if self._returncodes.get(r, 0) != 0]
        # A rank killed by a signal this launcher did not send caused the
        # others' failures (a rank that saw a peer die raises naming it),
        # whatever order their departures were seen in.
        killed = [r for r in failed if self._returncodes[r] < 0 and -self._returncodes[r] not in self._sent]
        culprit = (killed or failed)[0]
        self._blame = None
        returncode = self._returncodes[culprit]
        self._status = exit_status(returncode)
        others = len(self._running)
        stopping = f"; stopping the other {_ranks(others)}" if others else ""
        self._say(f"rank {culprit}{self._procs[culprit].where()} {describe_exit(returncode)}{stopping}")

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
            pids = ", ".join(f"rank {rank} (pid {r.proc.pid})" for rank, r in sorted(self._running.items()))
            self._say(f"giving up on {pids}: still running after SIGKILL")
            for started in self._running.values():
                started.kill_group()  # a remote shell that does not end: its agent stops the rank
            return False
        return True

    def _stop(self, signum: int, spare: Sequence[int] = ()) -> None:
        """Send ``signum`` to every rank's group but ``spare``; SIGKILL follows later."""
        self._stopping = True
        self._sent.add(signum)
        self._deadline = time.monotonic() + GRACE_SECONDS
        for rank, started in enumerate(self._procs):
            if rank not in spare:
                started.send(signum)

    def _kill(self) -> None:
        self._killed = True
        self._sent.add(signal.SIGKILL)
        self._deadline = time.monotonic() + _REAP_SECONDS
        for started in self._procs:
            started.send(signal.SIGKILL)

    def _say(self, message: str) -> None:
        self._output.say(f"onesided run: {message}")


def run(
    n: int,
    argv: Sequence[str],
    *,
    timeout: float | None = None,
    module: bool = False,
    hosts: Sequence[HostSlots] | None = None,
    rsh: Sequence[str] | None = None,
    coordinator: str | None = None,
    tag_output: bool = False,
    output_dir: str | os.PathLike[str] | None = None,
) -> int:
    """Run ``argv`` (a script and its arguments) as ``n`` ranks; return the job status.

    With ``module`` the first item of ``argv`` is a module name, run like
    ``python -m``.  ``timeout`` bounds the whole job in seconds.  ``hosts``
    places the ranks (:func:`onesided.run._hosts.placement`; default: the nodes
    of the Slurm allocation this runs in, else this machine); ranks on
    other hosts start through ``rsh`` (default :data:`DEFAULT_RSH`, or
    :data:`SLURM_RSH` on Slurm's nodes) and reach the coordinator at
    ``coordinator`` (default: the address the route to them leaves from).
    ``tag_output`` starts every line of the relayed output with ``[R] ``;
    ``output_dir`` (made if missing) receives each rank's output in
    ``rank.R.stdout`` and ``rank.R.stderr`` instead.
    See the module docstring for the exit status, stopping and output guarantees.
    SIGINT and SIGTERM are only intercepted when called from the main thread.
    """
    if n < 1:
        raise ValueError(f"need at least one rank, got {n}")
    if not argv:
        raise ValueError("nothing to run")
    if timeout is not None and timeout <= 0:
        raise ValueError(f"timeout must be positive, got {timeout}")
    from_slurm = False
    if hosts is None:
        hosts = slurm_hosts(os.environ)
        from_slurm = hosts is not None
    where: list[str | None] = [None] * n
    if hosts is not None:
        where = [None if is_local(name) else name for name in placement(hosts, n)]
    remote = sorted({name for name in where if name is not None})
    if rsh is None:
        rsh = SLURM_RSH if from_slurm else DEFAULT_RSH
    if not remote:
        coordinator = "127.0.0.1"
    elif coordinator is None:
        # Slurm's node names need not resolve; their NodeAddr does.
        coordinator = coordinator_address(node_addresses(remote) if from_slurm else remote)
    directory = None
    if output_dir is not None:
        directory = Path(output_dir)
        directory.mkdir(parents=True, exist_ok=True)  # before any rank starts; OSError names the path
    command = [sys.executable, *(["-m"] if module else []), *argv]
    return _Job(n, command, timeout, where, rsh, coordinator, tag_output, directory).run()


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
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--hosts",
        metavar="HOST[:SLOTS],...",
        help="place ranks on these hosts, SLOTS (default 1) consecutive ranks each, round and round "
        "(default: the nodes of the Slurm allocation, else this machine)",
    )
    where.add_argument("--hostfile", metavar="FILE", help="hosts one a line: HOST, HOST:SLOTS or HOST slots=N")
    parser.add_argument(
        "--rsh",
        "--launcher-exec",
        dest="rsh",
        metavar="COMMAND",
        help="remote shell that starts ranks on other hosts, run as COMMAND HOST WORD... "
        "({host} and {command} are filled in where given; default: ssh, srun inside Slurm)",
    )
    parser.add_argument(
        "--coordinator",
        metavar="ADDRESS",
        help="this machine's address as the other hosts reach it (default: the source of the route to them)",
    )
    parser.add_argument(
        "-l",
        "--tag-output",
        action="store_true",
        help="start every line of output with [R], R the rank that wrote it (as mpiexec -l)",
    )
    parser.add_argument(
        "--output-dir",
        metavar="DIR",
        help="write each rank's stdout and stderr to DIR/rank.R.stdout and DIR/rank.R.stderr "
        "instead of the terminal (DIR is made if missing)",
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
    try:
        hosts = parse_hosts(args.hosts) if args.hosts else read_hostfile(args.hostfile) if args.hostfile else None
        rsh = shlex.split(args.rsh) if args.rsh else None
        if rsh == []:
            raise ValueError("--rsh is empty")
        return run(
            args.np, program, timeout=args.timeout, module=args.module, hosts=hosts, rsh=rsh,
            coordinator=args.coordinator, tag_output=args.tag_output, output_dir=args.output_dir,
        )
    except (OSError, ValueError) as exc:
        print(f"python -m onesided run: error: {exc}", file=sys.stderr)
        return 2
