"""The launcher's relay of its ranks' output: whole lines, optionally tagged
with the rank, each rank's stdout to the launcher's stdout and its stderr to
the launcher's stderr.

Every rank (or, for a rank on another host, the remote shell carrying it)
writes into two pipes of its own; one thread of the launcher reads all of
them through a selector, as soon as data is there, and writes to the
launcher's two streams.

Guarantees of :class:`OutputRelay`
----------------------------------
* Whole lines: what a rank writes reaches the launcher's stream cut only
  after a newline, so another rank's output never lands inside one of its
  lines, whatever sizes the rank's own writes had. Two exceptions, both
  stated: a line longer than :data:`LINE_LIMIT` bytes goes out in pieces of
  that size, and a last line without a newline goes out whole when the
  pipe ends (the rank exited). When another rank's output (or the
  launcher's own message) follows a piece that did not end a line, a
  newline is written first, so lines never merge; only then, and at the
  end of a tagged stream, does the relay add a byte.
* Bytes pass through unharmed: nothing is decoded, so non-UTF-8 and binary
  output arrive as written; untagged, one rank's bytes appear in order and
  unchanged (but for the newline above, which a lone rank never gets).
* ``tag=True`` (``--tag-output``) starts every line with ``[R] ``, R the
  rank, as MPICH's ``mpiexec -l`` does; a piece of an over-long line that
  continues the line the stream is in gets no second tag.
* The relay always reads: a rank that writes much and fast fills no pipe
  while another waits, and stdout and stderr are read alike, so no rank
  blocks on a pipe the launcher does not read. When the launcher's own
  stream blocks (its reader is slow), ranks wait for it: back-pressure,
  never a deadlock between ranks.
* :meth:`OutputRelay.add` returns an event set once both of that rank's
  pipes have ended and everything read from them was written, so the
  launcher can report a rank's exit after the rank's last words.
* :meth:`OutputRelay.finish` waits (up to a bound) until every pipe has
  ended, writes what is still buffered, and stops the thread; pipes still
  open then (a process the rank started holds them) are closed and named.
* Writing to a stream that fails (its reader is gone: EPIPE) stops writing
  to it, never reading: the ranks keep running.
"""

from __future__ import annotations

import os
import select
import selectors
import threading
from dataclasses import dataclass, field
from typing import IO

__all__ = ["LAUNCHER", "LINE_LIMIT", "OutputRelay", "Stream"]

LINE_LIMIT = 1 << 20
"""The longest line (in bytes, newline included) that is written whole; a
longer one goes out in pieces of this size, as it arrives."""

_READ_SIZE = 1 << 16

LAUNCHER = -1
"""The source number of the launcher's own messages (never tagged)."""


def _write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd``, waiting where the fd is non-blocking."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            select.select([], [fd], [])  # someone made our stream non-blocking


def _available(fd: int) -> bytes:
    """What a pipe holds now, without waiting for more."""
    os.set_blocking(fd, False)
    chunks = []
    try:
        while chunk := os.read(fd, _READ_SIZE):
            chunks.append(chunk)
    except OSError:  # BlockingIOError: nothing more for now
        pass
    return b"".join(chunks)


class Stream:
    """One of the launcher's output streams (its stdout or its stderr), which
    every rank's relay and the launcher's messages share. Thread-safe."""

    def __init__(self, fd: int, tag: bool) -> None:
        self._fd = fd
        self._tag = tag
        self._lock = threading.Lock()
        self._open_line: int | None = None  # the source whose unterminated line the stream ends in
        self._broken = False

    def write(self, source: int, data: bytes) -> None:
        """Write ``data`` from ``source`` (a rank, or :data:`LAUNCHER`): whole
        lines, or a piece of one; see the module docstring."""
        if not data:
            return
        with self._lock:
            if self._broken:
                return
            out = b""
            if self._open_line is not None and self._open_line != source:
                out = b"\n"  # another source's piece: end its line rather than continue it
                self._open_line = None
            if self._tag and source != LAUNCHER:
                prefix = b"[%d] " % source
                body = data.replace(b"\n", b"\n" + prefix)
                if data.endswith(b"\n"):
                    body = body[: -len(prefix)]
                out += body if self._open_line == source else prefix + body
            else:
                out += data
            self._open_line = None if data.endswith(b"\n") else source
            try:
                _write_all(self._fd, out)
            except OSError:
                self._broken = True  # the reader is gone; the ranks go on

    def end(self) -> None:
        """A tagged stream ends with a newline; an untagged one as the rank's bytes did."""
        with self._lock:
            if self._tag and self._open_line is not None and not self._broken:
                self._open_line = None
                try:
                    _write_all(self._fd, b"\n")
                except OSError:
                    self._broken = True


@dataclass(eq=False)  # compared and hashed by identity: the relay keeps a set of them
class _Source:
    """One pipe of one rank and the bytes of its line not yet written."""

    rank: int
    name: str  # "stdout" or "stderr", for messages
    pipe: IO[bytes]
    stream: Stream
    closed: _RankClosed
    pending: bytearray = field(default_factory=bytearray)

    def feed(self, chunk: bytes) -> None:
        """Write every complete line now, and over-long pieces; keep the rest."""
        start = len(self.pending)
        self.pending += chunk
        newline = chunk.rfind(b"\n")
        if newline >= 0:
            cut = start + newline + 1
            self.stream.write(self.rank, bytes(self.pending[:cut]))
            del self.pending[:cut]
        while len(self.pending) >= LINE_LIMIT:
            self.stream.write(self.rank, bytes(self.pending[:LINE_LIMIT]))
            del self.pending[:LINE_LIMIT]

    def end(self) -> None:
        """The pipe ended (or is abandoned): write the last line whole, close it."""
        self.stream.write(self.rank, bytes(self.pending))
        self.pending.clear()
        self.pipe.close()
        self.closed.one_ended()


class _RankClosed:
    """Set once both pipes of a rank have ended."""

    def __init__(self, pipes: int) -> None:
        self.event = threading.Event()
        self._left = pipes
        if pipes == 0:
            self.event.set()

    def one_ended(self) -> None:  # only ever called by the relay thread
        self._left -= 1
        if self._left == 0:
            self.event.set()


class OutputRelay:
    """Relays ranks' pipes to the launcher's stdout and stderr (see the module
    docstring). Use as a context manager, or call :meth:`finish` at the end."""

    def __init__(self, tag: bool = False, stdout: int = 1, stderr: int = 2) -> None:
        self.stdout = Stream(stdout, tag)
        self.stderr = Stream(stderr, tag)
        self._selector = selectors.DefaultSelector()
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_write, False)
        self._selector.register(self._wake_read, selectors.EVENT_READ, None)
        self._lock = threading.Lock()
        self._incoming: list[_Source] = []  # added, not yet registered by the thread
        self._open: set[_Source] = set()  # touched by the thread only
        self._all_ended = threading.Condition(self._lock)
        self._open_count = 0
        self._stopping = False
        self._abandoned: list[str] = []
        self._thread = threading.Thread(target=self._relay, name="onesided-output", daemon=True)
        self._thread.start()

    def __enter__(self) -> OutputRelay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.finish(0.0)

    def say(self, message: str) -> None:
        """The launcher's own line on its stderr, never inside a rank's line."""
        self.stderr.write(LAUNCHER, message.encode(errors="replace") + b"\n")

    def add(self, rank: int, stdout: IO[bytes] | None, stderr: IO[bytes] | None) -> threading.Event:
        """Relay ``rank``'s pipes (the read ends; either may be None: not
        relayed). The relay owns and closes them. Returns the event set once
        both have ended and what they carried is written."""
        pipes = [(name, pipe, stream) for name, pipe, stream in
                 (("stdout", stdout, self.stdout), ("stderr", stderr, self.stderr)) if pipe is not None]
        closed = _RankClosed(len(pipes))
        with self._lock:
            if self._stopping:
                raise RuntimeError("the output relay has finished")
            self._incoming += [_Source(rank, name, pipe, stream, closed) for name, pipe, stream in pipes]
            self._open_count += len(pipes)
        self._wake()
        return closed.event

    def finish(self, timeout: float) -> list[str]:
        """Wait up to ``timeout`` seconds for every pipe to end, then stop
        relaying: pipes still open are closed (after writing what they
        carried). Returns them as ``"rank R's stdout"``, for a message."""
        with self._lock:
            self._all_ended.wait_for(lambda: self._open_count == 0, timeout)
            self._stopping = True
        self._wake()
        self._thread.join()
        self._selector.close()
        os.close(self._wake_read)
        os.close(self._wake_write)
        self.stdout.end()
        self.stderr.end()
        return self._abandoned

    def _wake(self) -> None:
        try:
            os.write(self._wake_write, b"\0")
        except BlockingIOError:
            pass  # the pipe is full of wake-ups already: the thread will look

    def _relay(self) -> None:
        while True:
            for key, _ in self._selector.select():
                if key.data is None:
                    if self._on_wake():
                        return
                    continue
                source: _Source = key.data
                try:
                    chunk = os.read(source.pipe.fileno(), _READ_SIZE)
                except OSError:
                    chunk = b""  # an unreadable pipe: treated as its end
                if chunk:
                    source.feed(chunk)
                else:
                    self._end(source)

    def _on_wake(self) -> bool:
        """Register new pipes; when finishing, end the open ones. True: stop."""
        os.read(self._wake_read, 4096)
        with self._lock:
            incoming, self._incoming = self._incoming, []
            stopping = self._stopping
        for source in incoming:
            self._selector.register(source.pipe, selectors.EVENT_READ, source)
            self._open.add(source)
        if not stopping:
            return False
        for source in sorted(self._open, key=lambda s: (s.rank, s.name)):
            self._abandoned.append(f"rank {source.rank}'s {source.name}")
            source.feed(_available(source.pipe.fileno()))
            self._end(source)
        return True

    def _end(self, source: _Source) -> None:
        self._selector.unregister(source.pipe)
        self._open.discard(source)
        source.end()
        with self._lock:
            self._open_count -= 1
            if self._open_count == 0:
                self._all_ended.notify_all()
