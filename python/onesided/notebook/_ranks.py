"""``onesided.Ranks``: ranks that stay alive between calls, for notebooks.

``Ranks(n)`` starts ``n`` ranks once, through ``python -m onesided run`` (so
``onesided.COMM_WORLD`` spans them), each serving code sent from here
(:mod:`onesided.notebook._cell_server`) in one namespace that lives as long
as the rank: a window created by one call is there for the next. The channel is
:mod:`onesided.notebook._ranks_channel`. The ``%%ranks`` cell magic
(:mod:`onesided.notebook._ranks_magic`) is a thin layer over this class.

Guarantees
----------
* :meth:`Ranks.run` runs the code on every rank and returns once every rank
  has finished it, with each rank's value and output, or raises.  Every
  line a rank writes meanwhile (from Python, C, or a crash message) is
  echoed as it arrives, whole, prefixed with ``[rank]``.
* A rank that raises does not stop the others: :class:`CellError` carries
  its traceback, tagged with its rank, and every rank serves the next call.
  Ranks still running :attr:`Ranks.grace` seconds after the first failure
  (e.g. waiting in a collective the failed rank never reached) are
  interrupted as below.
* An interrupt (SIGINT to this process while :meth:`Ranks.run` waits in the
  main thread, or :meth:`Ranks.interrupt` from any thread) sends SIGINT to
  every rank still running the call.  A rank running Python code gets
  ``KeyboardInterrupt`` there, and so does a rank waiting in a onesided call
  (``Wait_notify``, a ``Fence`` or ``Lock`` waiting for a peer: every wait
  runs Python's signal handlers every 50 ms, docs/semantics.md
  "Interrupted calls"); it lives on, with what that section says the call
  leaves. A rank inside another library's C call that never returns to
  Python gets it only when that call returns: if an interrupted rank has not
  stopped :attr:`Ranks.grace` seconds later, a note says so; a second
  interrupt then stops all ranks (:class:`RanksError`).
* A rank that dies ends all of them (the launcher stops the others), and
  the call raises :class:`RanksError`.
* :meth:`Ranks.stop` (also on leaving ``with``, and at interpreter exit for
  ranks not stopped) returns once the launcher has reaped every rank and
  removed their shared memory; nothing of them is left.
* A collective interrupted on one rank breaks ``COMM_WORLD`` for good (see
  :mod:`onesided.comm._comm`): later collectives, window creation included,
  raise :class:`~onesided.WorldError`; windows already created still work
  for RMA that needs no collective. Start new ranks to get a whole world.

One thread uses a ``Ranks`` at a time; only :meth:`Ranks.interrupt` may be
called from another.
"""

from __future__ import annotations

import atexit
import hmac
import os
import pickle
import secrets
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Any

from .._errors import ArgumentError, ArgumentTypeError, Error
from ..run._spawn import _payload
from ._rank_output import CellEnd, LineAssembler
from ._ranks_channel import (
    ENV_ADDRESS,
    ENV_OUTPUT,
    ENV_TOKEN,
    HELLO,
    TOKEN_BYTES,
    FrameReader,
    NotSent,
    output_fifo,
    receive_frame,
    send_frame,
)

__all__ = ["CellError", "RankResult", "Ranks", "RanksError"]

_STOP_SECONDS = 30.0
"""How long :meth:`Ranks.stop` waits for ranks told to stop before the
launcher is told to kill them."""

_WAKE_INTERRUPT = b"i"
_WAKE_LAUNCHER_EXITED = b"x"


class RanksError(Error, RuntimeError):
    """The ranks could not start, died, or were stopped; they cannot run code."""


@dataclass(frozen=True)
class RankResult:
    """What one rank did with a call."""

    rank: int
    value: Any
    """The code's last expression's value (or the function's return value);
    ``None`` if there is none, or if the rank raised. A value that cannot be
    pickled comes back as an object whose ``repr`` is its ``repr`` there."""
    stdout: str
    """The lines the rank wrote to its stdout during the call."""
    stderr: str
    """The lines the rank wrote to its stderr during the call."""
    error: str | None
    """The rank's traceback if the call raised there, else ``None``."""


class CellError(Error, RuntimeError):
    """The call raised on at least one rank (every rank can run the next call).

    The message holds each failed rank's traceback, every line prefixed
    with ``[rank]``; :attr:`results` has every rank's :class:`RankResult`.
    """

    def __init__(self, message: str, results: list[RankResult]) -> None:
        super().__init__(message)
        self.results = results

    @property
    def failed_ranks(self) -> list[int]:
        """The ranks where the call raised, in rank order."""
        return [r.rank for r in self.results if r.error is not None]


@dataclass
class _Call:
    """The state of one call while the ranks run it."""

    cell: int
    replies: dict[int, tuple[Any, tuple[str, str] | None]]
    ended: dict[int, set[str]]
    lines: dict[tuple[int, str], list[str]]
    interrupted: set[int]
    first_error: int | None = None
    deadline: float | None = None
    noted: bool = False

    def finished(self, rank: int) -> bool:
        return rank in self.replies and len(self.ended[rank]) == 2


_live: weakref.WeakSet[Ranks] = weakref.WeakSet()


@atexit.register
def _stop_live_ranks() -> None:
    """Ranks the program forgot to stop end with it."""
    for ranks in list(_live):
        ranks.stop()


class Ranks:
    """``n`` ranks that live until :meth:`stop`, each keeping its variables
    (and windows) from one :meth:`run` to the next. A context manager."""

    grace: float = 2.0
    """Seconds the other ranks may keep running after one raised, and an
    interrupted rank may take to stop before a note says it is stuck."""

    def __init__(self, n: int, *, echo: bool = True, start_timeout: float = 120.0) -> None:
        """Start ``n`` ranks and wait (at most ``start_timeout`` seconds) until
        each has connected. With ``echo`` every line they write is printed
        here, prefixed with its rank. Raises :class:`RanksError` if they do
        not start; nothing is left running then."""
        if isinstance(n, bool) or not isinstance(n, int):
            raise ArgumentTypeError(f"n (the number of ranks) must be an int, got {type(n).__name__}")
        if n < 1:
            raise ArgumentError(f"n (the number of ranks) must be at least 1, got {n}")
        self._size = n
        self.echo = echo
        self._cell = 0
        self._stopped = False
        self._socks: list[socket.socket] = []
        self._pids: list[int] = []
        self._frames = [FrameReader() for _ in range(n)]
        self._assemblers = {(r, s): LineAssembler() for r in range(n) for s in ("out", "err")}
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        self._dir = tempfile.mkdtemp(prefix="onesided-ranks-")
        self._fifo_fds: list[int] = []
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=n)
        self._proc: subprocess.Popen[bytes] | None = None
        try:
            self._open_fifos()
            token = secrets.token_hex(TOKEN_BYTES // 2)
            self._start_launcher(token)
            self._accept(token.encode("ascii"), start_timeout)
        except BaseException:
            self._shut_down(kill=True)
            raise
        _live.add(self)

    @property
    def size(self) -> int:
        """The number of ranks."""
        return self._size

    @property
    def running(self) -> bool:
        """Whether the ranks are alive and can run code."""
        return not self._stopped

    def __enter__(self) -> Ranks:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"Ranks({self._size}{'' if self.running else ', stopped'})"

    # -- the calls ----------------------------------------------------------------

    def run(self, code: str | Callable[..., Any], *args: Any, **kwargs: Any) -> list[RankResult]:
        """Run ``code`` on every rank and return their results, in rank order.

        ``code`` is source text (run in the rank's namespace; a final
        expression is the value) or a function, called as
        ``code(*args, **kwargs)`` with the rank's namespace as its globals.
        Functions from ``__main__`` or a notebook travel as source, like
        :func:`onesided.launch`'s. Raises :class:`CellError` if it raised
        on any rank, ``KeyboardInterrupt`` if interrupted (every rank's
        traceback is echoed), :class:`RanksError` if the ranks are gone.
        """
        __tracebackhide__ = True  # noqa: F841  (IPython and pytest hide this frame)
        if isinstance(code, str):
            return self._call("source", code)
        if callable(code):
            return self._call("function", _payload(code, args, kwargs))
        raise ArgumentTypeError(f"code must be source text or a function, got {type(code).__name__}")

    def gather(self, name: str) -> list[Any]:
        """The value of variable ``name`` on every rank, in rank order.
        Raises :class:`CellError` where it is not defined or cannot be pickled."""
        __tracebackhide__ = True  # noqa: F841
        if not isinstance(name, str) or not name.isidentifier():
            raise ArgumentError(f"name must be a Python identifier, got {name!r}")
        return [result.value for result in self._call("gather", name)]

    def interrupt(self) -> None:
        """Interrupt the call in progress, as SIGINT to this process would
        (safe from any thread; nothing happens if no call is in progress)."""
        try:
            os.write(self._wake_w, _WAKE_INTERRUPT)
        except (BlockingIOError, OSError):
            pass  # a full pipe already holds a wake-up; a closed one: stopped

    def stop(self) -> None:
        """Stop the ranks (each leaves as at the end of a script) and wait
        until the launcher has reaped them and removed their shared memory.
        Ranks that do not leave within 30 s are killed. Idempotent."""
        if not self._stopped:
            _live.discard(self)
            self._shut_down(kill=False)

    # -- starting -----------------------------------------------------------------

    def _open_fifos(self) -> None:
        for rank in range(self._size):
            for stream in ("out", "err"):
                path = output_fifo(self._dir, rank, stream)
                os.mkfifo(path, 0o600)
                reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
                # A writer of our own: the FIFO never reads as ended, even
                # before the rank opens it or after it died.
                keeper = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
                self._fifo_fds += [reader, keeper]
                self._selector.register(reader, selectors.EVENT_READ, (rank, stream))

    def _start_launcher(self, token: str) -> None:
        host, port = self._listener.getsockname()[:2]
        env = {**os.environ, ENV_ADDRESS: f"{host}:{port}", ENV_TOKEN: token, ENV_OUTPUT: self._dir}
        cmd = [sys.executable, "-m", "onesided", "run", "-n", str(self._size),
               "-m", "onesided.notebook._cell_server"]
        # Its own session: the kernel's Ctrl-C reaches the ranks only as we send it.
        self._proc = subprocess.Popen(cmd, env=env, start_new_session=True)
        proc, wake = self._proc, self._wake_w

        def report_exit() -> None:
            proc.wait()
            try:
                os.write(wake, _WAKE_LAUNCHER_EXITED)
            except OSError:
                pass  # closed: we are no longer listening

        threading.Thread(target=report_exit, name="onesided-ranks-launcher", daemon=True).start()

    def _accept(self, token: bytes, timeout: float) -> None:
        """Wait for every rank's authenticated hello."""
        by_rank: dict[int, tuple[socket.socket, int]] = {}
        deadline = time.monotonic() + timeout
        waiting = selectors.DefaultSelector()
        waiting.register(self._listener, selectors.EVENT_READ)
        waiting.register(self._wake_r, selectors.EVENT_READ)
        with self._interrupts_wake_us(), waiting:
            while len(by_rank) < self._size:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise RanksError(f"{self._size - len(by_rank)} of {self._size} ranks did not start "
                                     f"within {timeout:g} s")
                for key, _ in waiting.select(remaining):
                    if key.fileobj is self._wake_r:
                        self._starting_woken()
                    else:
                        self._hello(token, by_rank)
        self._socks = [by_rank[r][0] for r in range(self._size)]
        self._pids = [by_rank[r][1] for r in range(self._size)]
        for rank, sock in enumerate(self._socks):
            self._selector.register(sock, selectors.EVENT_READ, (rank, "reply"))
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self._listener.close()

    def _starting_woken(self) -> None:
        wake = os.read(self._wake_r, 4096)
        if _WAKE_LAUNCHER_EXITED in wake:
            assert self._proc is not None
            raise RanksError(f"the ranks could not start: the launcher exited with status "
                             f"{self._proc.returncode} (its message, if any, is above)")
        raise KeyboardInterrupt

    def _hello(self, token: bytes, by_rank: dict[int, tuple[socket.socket, int]]) -> None:
        sock, _ = self._listener.accept()
        sock.settimeout(10)  # a peer that connects but stays silent must not block us
        try:
            hello = receive_frame(sock)
        except OSError:
            hello = None
        sock.settimeout(None)
        # Nothing from a peer without the token is trusted, not even its rank.
        if hello is None or len(hello) != TOKEN_BYTES + HELLO.size or not hmac.compare_digest(
            hello[:TOKEN_BYTES], token
        ):
            sock.close()
            return
        rank, pid = HELLO.unpack(hello[TOKEN_BYTES:])
        if not 0 <= rank < self._size or rank in by_rank:
            sock.close()
            raise RanksError(f"a rank said it was rank {rank} of {self._size}, which is taken or impossible")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        by_rank[rank] = (sock, pid)

    # -- one call -----------------------------------------------------------------

    def _call(self, kind: str, payload: Any) -> list[RankResult]:
        __tracebackhide__ = True  # noqa: F841
        if self._stopped:
            raise RanksError("these ranks have stopped; start new ones")
        self._cell += 1
        call = _Call(self._cell, {}, {r: set() for r in range(self._size)},
                     {(r, s): [] for r in range(self._size) for s in ("out", "err")}, set())
        request = pickle.dumps(("run", call.cell, kind, payload))
        # Interrupts are turned into wake-ups before the ranks get the call,
        # so none can land between here and the wait.
        with self._interrupts_wake_us():
            try:
                for sock in self._socks:
                    send_frame(sock, request)
                self._wait(call)
            except BaseException:
                # Something else broke the wait (a pytest timeout, a bug):
                # ranks left inside the call would never serve the next one.
                if not self._stopped:
                    self._shut_down(kill=True)
                raise
        return self._outcome(call)

    def _wait(self, call: _Call) -> None:
        while not all(call.finished(r) for r in range(self._size)):
            timeout = None if call.deadline is None else max(0.0, call.deadline - time.monotonic())
            events = self._selector.select(timeout)
            if not events:
                self._on_deadline(call)
            for key, _ in events:
                if key.data is None:
                    self._on_wake(call)
                elif key.data[1] == "reply":
                    self._on_reply(call, key.data[0])
                else:
                    self._on_output(call, *key.data)

    def _on_output(self, call: _Call, rank: int, stream: str) -> None:
        try:
            data = os.read(self._fifo_fd(rank, stream), 1 << 16)
        except BlockingIOError:
            return
        for event in self._assemblers[rank, stream].feed(data):
            if isinstance(event, CellEnd):
                if event.cell == call.cell:
                    call.ended[rank].add(stream)
            else:
                self._show(call, rank, stream, event.text)

    def _show(self, call: _Call, rank: int, stream: str, text: str) -> None:
        call.lines[rank, stream].append(text)
        if self.echo:
            target = sys.stdout if stream == "out" else sys.stderr
            print(f"[{rank}] {text}", file=target, flush=True)

    def _fifo_fd(self, rank: int, stream: str) -> int:
        return self._fifo_fds[4 * rank + (0 if stream == "out" else 2)]

    def _on_reply(self, call: _Call, rank: int) -> None:
        data = self._socks[rank].recv(1 << 20)
        if not data:
            self._on_rank_gone(call, rank)
        for frame in self._frames[rank].feed(data):
            _, cell, value, error = pickle.loads(frame)
            if cell != call.cell:
                continue  # a reply to a call abandoned by a KeyboardInterrupt in its caller
            call.replies[rank] = (value, error)
            # An interrupted rank's KeyboardInterrupt is not a failure of its own.
            if error is not None and rank not in call.interrupted and call.first_error is None:
                call.first_error = rank
                if not all(r in call.replies for r in range(self._size)):
                    call.deadline = time.monotonic() + self.grace

    def _on_wake(self, call: _Call) -> None:
        wake = os.read(self._wake_r, 4096)
        if _WAKE_LAUNCHER_EXITED in wake:
            self._on_rank_gone(call, None)
        for _ in range(wake.count(_WAKE_INTERRUPT)):
            busy = self._busy(call)
            if call.interrupted and any(r in call.interrupted for r in busy):
                self._stop_stuck(call, busy, "interrupted twice")
            self._interrupt_ranks(call, busy)

    def _on_deadline(self, call: _Call) -> None:
        busy = self._busy(call)
        if not busy:
            call.deadline = None  # all replied; their last lines are on the way
            return
        if not call.interrupted:
            self._interrupt_ranks(call, busy)
            return
        call.deadline = None
        if busy and not call.noted:
            call.noted = True
            names = ", ".join(str(r) for r in busy)
            print(f"onesided: rank(s) {names} did not stop {self.grace:g} s after SIGINT: inside a call "
                  "that does not return to Python until it completes (e.g. Wait_notify, or a Fence or "
                  "Lock waiting for a peer); interrupt again to stop all ranks", file=sys.stderr, flush=True)

    def _busy(self, call: _Call) -> list[int]:
        return [r for r in range(self._size) if r not in call.replies]

    def _interrupt_ranks(self, call: _Call, ranks: list[int]) -> None:
        for rank in ranks:
            try:
                os.kill(self._pids[rank], signal.SIGINT)
            except ProcessLookupError:
                pass  # it died; its connection closing says so
        call.interrupted.update(ranks)
        call.deadline = time.monotonic() + self.grace

    def _stop_stuck(self, call: _Call, busy: list[int], why: str) -> None:
        self._shut_down(kill=True)
        names = ", ".join(str(r) for r in busy)
        raise RanksError(f"rank(s) {names} did not respond to SIGINT and were {why}: all ranks are stopped")

    def _on_rank_gone(self, call: _Call, rank: int | None) -> None:
        """A rank's connection closed, or the launcher exited: the job is over."""
        # Whatever the ranks wrote before they went is in the FIFOs.
        for (r, stream), assembler in self._assemblers.items():
            while True:
                try:
                    data = os.read(self._fifo_fd(r, stream), 1 << 16)
                except BlockingIOError:
                    break
                for event in assembler.feed(data):
                    if not isinstance(event, CellEnd):
                        self._show(call, r, stream, event.text)
            for line in assembler.flush():
                self._show(call, r, stream, line.text)
        who = "the launcher exited" if rank is None else f"rank {rank} died"
        self._shut_down(kill=True)
        raise RanksError(f"{who} during the call; all ranks are stopped (the launcher's message, if "
                         "any, is above)")

    def _outcome(self, call: _Call) -> list[RankResult]:
        __tracebackhide__ = True  # noqa: F841
        results = []
        for rank in range(self._size):
            value_bytes, error = call.replies[rank]
            value: Any = None
            if value_bytes is not None:
                try:
                    value = pickle.loads(value_bytes)
                except Exception as exc:
                    value = NotSent(f"<a value the kernel cannot unpickle: {exc}>", str(exc))
            results.append(RankResult(
                rank, value, "".join(line + "\n" for line in call.lines[rank, "out"]),
                "".join(line + "\n" for line in call.lines[rank, "err"]),
                None if error is None else error[1],
            ))
        failed = [r for r in results if r.error is not None]
        if call.interrupted and call.first_error is None:
            if self.echo:
                for result in failed:
                    print(_tagged(result.rank, result.error or ""), file=sys.stderr, end="", flush=True)
            raise KeyboardInterrupt
        if failed:
            raise CellError(_failure_message(call, results, self.grace), results)
        return results

    # -- signals and shutdown -----------------------------------------------------

    @contextmanager
    def _interrupts_wake_us(self) -> Iterator[None]:
        """While waiting in the main thread, SIGINT wakes the wait instead of
        raising wherever it lands (it could tear a frame apart)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        def on_sigint(signum: int, frame: FrameType | None) -> None:
            self.interrupt()

        previous = signal.signal(signal.SIGINT, on_sigint)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)

    def _shut_down(self, kill: bool) -> None:
        """End the ranks (asking them, unless ``kill``), reap the launcher,
        and release everything this object holds."""
        self._stopped = True
        _live.discard(self)
        proc = self._proc
        if proc is not None and proc.poll() is None:
            if not kill:
                for sock in self._socks:
                    try:
                        send_frame(sock, pickle.dumps(("stop",)))
                    except OSError:
                        pass  # that rank is gone; the launcher knows
                try:
                    proc.wait(timeout=_STOP_SECONDS)
                except subprocess.TimeoutExpired:
                    kill = True
            if kill:
                # The launcher sends SIGTERM to every rank, SIGKILL 2 s later,
                # reaps them and removes their shared memory.
                proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
        # Closing the connections also ends ranks whose launcher we could not
        # wait for: each exits (or SIGTERMs itself) when its connection ends.
        for sock in self._socks:
            sock.close()
        self._listener.close()
        self._selector.close()
        for fd in (*self._fifo_fds, self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass
        self._fifo_fds = []
        self._wake_w = -1
        shutil.rmtree(self._dir, ignore_errors=True)


def _tagged(rank: int, text: str) -> str:
    """``text`` with every line prefixed by ``[rank]``."""
    return "".join(f"[{rank}] {line}\n" for line in text.splitlines())


def _failure_message(call: _Call, results: list[RankResult], grace: float) -> str:
    assert call.first_error is not None
    first = results[call.first_error]
    parts = [f"rank {first.rank} raised:\n{_tagged(first.rank, first.error or '')}"]
    for result in results:
        if result.error is None or result.rank == first.rank:
            continue
        if result.rank in call.interrupted:
            parts.append(f"rank {result.rank} was interrupted {grace:g} s after rank {first.rank} "
                         f"raised:\n{_tagged(result.rank, result.error)}")
        else:
            parts.append(f"rank {result.rank} raised:\n{_tagged(result.rank, result.error)}")
    return "\n".join(parts).rstrip("\n")
