"""``python -m onesided run``: start N ranks and supervise them.

The launcher starts a :class:`Coordinator` thread (the server side of the wire
protocol documented in :mod:`onesided._world`), then one child process per
rank, each in its own session so that stopping a rank's process group also
stops whatever it spawned.  Children inherit stdout and stderr.

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
import hmac
import os
import queue
import secrets
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType, TracebackType

from ._world import (
    COLLECTIVE_HEADER,
    ENV_COORD,
    ENV_RANK,
    ENV_SIZE,
    ENV_TOKEN,
    FRAME_HEADER,
    HELLO_HEADER,
    MSG_BYE,
    MSG_COLLECTIVE,
    MSG_ERROR,
    MSG_HELLO,
    encode_frame,
    encode_result,
)

__all__ = ["Coordinator", "GRACE_SECONDS", "add_arguments", "main", "run"]

GRACE_SECONDS = 2.0
"""How long stopped ranks get between the first signal and SIGKILL."""

_REAP_SECONDS = 5.0
"""How long to wait for SIGKILLed ranks before giving up on them (D state)."""

_MAX_HELLO = 4096
"""Largest frame accepted before a connection has authenticated."""

_RECV_SIZE = 1 << 18


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


@dataclass(eq=False)
class _Connection:
    sock: socket.socket
    rank: int | None = None  # set once the hello is accepted
    rejected: bool = False  # hello refused: discard input until the peer closes
    inbox: bytearray = field(default_factory=bytearray)
    outbox: bytearray = field(default_factory=bytearray)


class Coordinator:
    """Serve the collectives of a world of ``size`` ranks on 127.0.0.1.

    Runs in a daemon thread between ``__enter__`` and ``__exit__``.  All
    collective state is owned by that thread; other threads only call
    :meth:`rank_exited`.  If the thread dies of a bug it closes every
    connection, so ranks get :class:`~onesided._world.WorldError` instead of
    hanging.
    """

    def __init__(self, size: int, token: bytes) -> None:
        self._size = size
        self._token = token
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=max(size, 128))
        self._listener.setblocking(False)
        self._wake_reader, self._wake_writer = socket.socketpair()
        self._wake_writer.setblocking(False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._listener, selectors.EVENT_READ)
        self._selector.register(self._wake_reader, selectors.EVENT_READ)
        self._thread = threading.Thread(target=self._serve, name="onesided-coordinator", daemon=True)
        self._stopping = False
        # Departures, in the order they happened, from either thread.
        self._departures_lock = threading.Lock()
        self._departures: dict[int, str] = {}
        self._reported: queue.SimpleQueue[tuple[int, str]] = queue.SimpleQueue()
        # Owned by the coordinator thread.
        self._connections: dict[int, _Connection] = {}
        self._pending: dict[int, tuple[str, memoryview]] = {}
        self._seq = 0
        self._broken: str | None = None

    @property
    def address(self) -> str:
        """``host:port`` for ``ONESIDED_COORD``."""
        host, port = self._listener.getsockname()[:2]
        return f"{host}:{port}"

    def __enter__(self) -> Coordinator:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stopping = True
        self._wake()
        self._thread.join()
        self._wake_writer.close()

    def rank_exited(self, rank: int, state: str) -> list[int]:
        """Record that ``rank``'s process ended (``state`` says how).

        Returns the ranks that departed before it, in departure order.
        Thread-safe.
        """
        with self._departures_lock:
            earlier = list(self._departures)
            if rank in self._departures:
                return earlier[: earlier.index(rank)]
            self._departures[rank] = state
        self._reported.put((rank, state))
        self._wake()
        return earlier

    def _wake(self) -> None:
        try:
            self._wake_writer.send(b"\0")
        except OSError:
            pass  # full (a wake-up is already pending) or the thread has stopped

    def _serve(self) -> None:
        try:
            while not self._stopping:
                for key, events in self._selector.select():
                    if key.fileobj is self._listener:
                        self._accept()
                    elif key.fileobj is self._wake_reader:
                        self._wake_reader.recv(4096)
                        self._handle_reports()
                    else:
                        connection: _Connection = key.data
                        if connection.sock.fileno() < 0:
                            continue  # closed by an earlier event of this batch
                        if events & selectors.EVENT_WRITE:
                            self._flush(connection)
                        if events & selectors.EVENT_READ:
                            self._receive(connection)
        except BaseException:
            print("onesided run: internal error in the coordinator:", file=sys.stderr, flush=True)
            traceback.print_exc()
        finally:
            for key in list(self._selector.get_map().values()):
                key.fileobj.close()  # type: ignore[union-attr]
            self._selector.close()

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self._listener.accept()
            except BlockingIOError:
                return
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._selector.register(sock, selectors.EVENT_READ, _Connection(sock))

    def _receive(self, connection: _Connection) -> None:
        try:
            chunk = connection.sock.recv(_RECV_SIZE)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._close(connection)
            if connection.rank is not None:
                self._depart(connection.rank, "closed its connection without saying bye (did it crash?)")
            return
        if connection.rejected:
            return
        inbox = connection.inbox
        inbox += chunk
        while len(inbox) >= FRAME_HEADER.size:
            (length,) = FRAME_HEADER.unpack_from(inbox)
            if connection.rank is None and length > _MAX_HELLO:
                self._close(connection)
                return
            end = FRAME_HEADER.size + length
            if len(inbox) < end:
                return
            payload = memoryview(bytes(inbox[FRAME_HEADER.size : end]))
            del inbox[:end]
            self._handle_frame(connection, payload)
            if connection.sock.fileno() < 0:
                return  # closed while handling the frame

    def _handle_frame(self, connection: _Connection, payload: memoryview) -> None:
        kind_byte, body = bytes(payload[:1]), payload[1:]
        if connection.rank is None:
            self._handle_hello(connection, kind_byte, body)
            return
        rank = connection.rank
        if kind_byte == MSG_COLLECTIVE and len(body) >= COLLECTIVE_HEADER.size:
            seq, kind_length = COLLECTIVE_HEADER.unpack_from(body)
            kind_end = COLLECTIVE_HEADER.size + kind_length
            kind = bytes(body[COLLECTIVE_HEADER.size : kind_end]).decode("ascii", "replace")
            self._handle_collective(rank, seq, kind, body[kind_end:])
        elif kind_byte == MSG_BYE:
            self._close(connection)
            self._depart(rank, "is exiting (said bye)")
        else:
            self._close(connection)
            self._depart(rank, f"sent a malformed frame of type {kind_byte!r}")

    def _handle_hello(self, connection: _Connection, kind_byte: bytes, body: memoryview) -> None:
        if kind_byte != MSG_HELLO or len(body) < HELLO_HEADER.size:
            self._reject(connection, "the first frame must be a hello")
            return
        rank, size = HELLO_HEADER.unpack_from(body)
        if not hmac.compare_digest(bytes(body[HELLO_HEADER.size :]), self._token):
            self._reject(connection, f"hello from rank {rank} has the wrong token")
        elif size != self._size or rank >= size:
            self._reject(
                connection, f"hello from rank {rank} of {size}, but this world has {self._size} ranks"
            )
        elif rank in self._connections:
            self._reject(connection, f"rank {rank} is already connected")
        elif self._has_departed(rank):
            self._reject(connection, f"rank {rank} has already left the world")
        else:
            connection.rank = rank
            self._connections[rank] = connection

    def _reject(self, connection: _Connection, message: str) -> None:
        # The client reads this as the reply to its first collective.  Closing
        # now could turn its unread request into a reset that destroys the
        # reply, so the connection stays open, ignored, until the client closes.
        connection.rejected = True
        try:
            connection.sock.send(encode_frame(MSG_ERROR + message.encode()))
            connection.sock.shutdown(socket.SHUT_WR)
        except OSError:
            self._close(connection)

    def _handle_collective(self, rank: int, seq: int, kind: str, data: memoryview) -> None:
        if self._broken is not None:
            self._send(rank, self._error_frame(kind, seq))
            return
        first = next(iter(self._pending.items()), None)
        self._pending[rank] = (kind, data)
        if seq != self._seq:
            self._break(f"rank {rank} sent collective #{seq} while the world is at #{self._seq}")
        elif first is not None and first[1][0] != kind:
            first_rank, (first_kind, _) = first
            self._break(f"rank {rank} called {kind} while rank {first_rank} called {first_kind}")
        elif len(self._pending) == self._size:
            frame = encode_result(seq, [self._pending[r][1] for r in range(self._size)])
            for waiting in range(self._size):
                self._send(waiting, frame)
            self._pending.clear()
            self._seq += 1

    def _has_departed(self, rank: int) -> bool:
        with self._departures_lock:
            return rank in self._departures

    def _handle_reports(self) -> None:
        while True:
            try:
                rank, state = self._reported.get_nowait()
            except queue.Empty:
                return
            self._apply_departure(rank, state)

    def _depart(self, rank: int, state: str) -> None:
        """Record a departure seen by this thread (unless already recorded)."""
        with self._departures_lock:
            if rank in self._departures:
                return
            self._departures[rank] = state
        self._apply_departure(rank, state)

    def _apply_departure(self, rank: int, state: str) -> None:
        connection = self._connections.pop(rank, None)
        if connection is not None:
            self._close(connection)
        mine = self._pending.pop(rank, None)
        if mine is not None:
            where = f" while waiting in {mine[0]} #{self._seq}"
        elif self._pending:
            where = f" without joining {next(iter(self._pending.values()))[0]} #{self._seq}"
        elif self._seq:
            where = f" after collective #{self._seq - 1}"
        else:
            where = " before any collective"
        self._break(f"rank {rank} {state}{where}")

    def _break(self, reason: str) -> None:
        """Mark the world broken (first reason wins) and fail the pending collective."""
        if self._broken is None:
            self._broken = reason
        for rank, (kind, _) in list(self._pending.items()):
            self._send(rank, self._error_frame(kind, self._seq))
        self._pending.clear()

    def _error_frame(self, kind: str, seq: int) -> bytes:
        return encode_frame(MSG_ERROR + f"{kind} #{seq} failed: {self._broken}".encode())

    def _send(self, rank: int, frame: bytes) -> None:
        connection = self._connections.get(rank)
        if connection is None:
            return  # departed; its departure already failed what it waited for
        if not connection.outbox:
            try:
                sent = connection.sock.send(frame)
            except BlockingIOError:
                sent = 0
            except OSError:
                return  # the peer is gone; reading will report its departure
            if sent == len(frame):
                return
            self._selector.modify(connection.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, connection)
            frame = frame[sent:]
        connection.outbox += frame

    def _flush(self, connection: _Connection) -> None:
        try:
            sent = connection.sock.send(connection.outbox)
        except BlockingIOError:
            return
        except OSError:
            sent = len(connection.outbox)  # the peer is gone; reading will report it
        del connection.outbox[:sent]
        if not connection.outbox:
            self._selector.modify(connection.sock, selectors.EVENT_READ, connection)

    def _close(self, connection: _Connection) -> None:
        if connection.rank is not None and self._connections.get(connection.rank) is connection:
            del self._connections[connection.rank]
        if connection.sock.fileno() >= 0:
            self._selector.unregister(connection.sock)
            connection.sock.close()


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
