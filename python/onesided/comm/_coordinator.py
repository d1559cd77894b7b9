"""The coordinator: the server side of the wire protocol documented in
:mod:`onesided.comm._comm`, serving the collectives of one job's ranks on
127.0.0.1, or on an address the other hosts reach when the job spans hosts.
The launcher runs one (:mod:`onesided.run._launch`); so does rank 0 of a job
an MPI launcher started (:mod:`onesided.comm._pmi_world`).

Guarantees
----------
* Only a connection whose hello carries the job's token, a rank below the
  world size and a rank not yet connected nor departed takes part.
* A collective completes when every rank has sent it with the same kind;
  every rank then gets the same result frame.
* The first departure (bye, a closed connection, or an exit the launcher
  reports) or disagreement (another kind or sequence number) breaks the
  world: the pending collective and every later one fail, at every rank
  that calls them, with the first reason.
* A rank whose host goes silent (host down, link cut) departs once its
  connection has had no TCP keepalive answer for the peer timeout
  (``ONESIDED_PEER_TIMEOUT``, default 3 s): the kernel answers keepalives,
  so a rank busy in Python or stopped never departs this way.
* Waiting is driven by events (readable sockets, a wake-up socket); nothing polls.
"""

from __future__ import annotations

import errno
import hmac
import os
import queue
import selectors
import socket
import sys
import threading
import traceback
from dataclasses import dataclass, field
from types import TracebackType

from ._comm import (
    COLLECTIVE_HEADER,
    FRAME_HEADER,
    HELLO_HEADER,
    MSG_BYE,
    MSG_COLLECTIVE,
    MSG_ERROR,
    MSG_HELLO,
    encode_frame,
    encode_result,
)

__all__ = ["Coordinator"]

_MAX_HELLO = 4096
"""Largest frame accepted before a connection has authenticated."""

_RECV_SIZE = 1 << 18


def peer_timeout() -> int:
    """Seconds a rank's host may stay silent before it departs:
    ``ONESIDED_PEER_TIMEOUT``, a whole number in [2, 3600] (default 3), the
    core's setting for its own liveness connections (peers/liveness.hpp)."""
    text = os.environ.get("ONESIDED_PEER_TIMEOUT", "") or "3"
    if not text.isdigit() or not 2 <= int(text) <= 3600:
        raise ValueError(f"ONESIDED_PEER_TIMEOUT={text} is not a whole number of seconds in [2, 3600]")
    return int(text)


def _remote(host: str) -> str:
    """``host`` when it is another machine's address, else "" (not worth naming)."""
    return "" if host.startswith("127.") or host in ("::1", "::ffff:127.0.0.1") else host


def _keep_alive(sock: socket.socket, timeout: int) -> None:
    """Probe every second while idle; drop after ``timeout`` s without an answer."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT, timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, timeout * 1000)


@dataclass(eq=False)
class _Connection:
    sock: socket.socket
    rank: int | None = None  # set once the hello is accepted
    rejected: bool = False  # hello refused: discard input until the peer closes
    inbox: bytearray = field(default_factory=bytearray)
    outbox: bytearray = field(default_factory=bytearray)
    host: str = ""  # the rank's address as this end sees it, for messages


class Coordinator:
    """Serve the collectives of a world of ``size`` ranks on ``host`` (an
    address of this machine; 127.0.0.1 unless ranks run on other hosts).

    Runs in a daemon thread between ``__enter__`` and ``__exit__``.  All
    collective state is owned by that thread; other threads only call
    :meth:`rank_exited` and :meth:`wait_for_departures`.  If the thread dies of a bug it closes every
    connection, so ranks get :class:`~onesided.comm._comm.WorldError` instead of
    hanging.
    """

    def __init__(self, size: int, token: bytes, host: str = "127.0.0.1") -> None:
        self._size = size
        self._token = token
        self._timeout = peer_timeout()
        # Every connection must prove the job's token (hello) before it takes part.
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._listener = socket.create_server((host, 0), family=family, backlog=max(size, 128))
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
        self._all_departed = threading.Event()
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
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

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
            self._record(rank, state)
        self._reported.put((rank, state))
        self._wake()
        return earlier

    def wait_for_departures(self, timeout: float) -> bool:
        """Wait until every rank has departed (said bye, closed its
        connection, or was reported exited), at most ``timeout`` seconds;
        return whether they all have. Thread-safe."""
        return self._all_departed.wait(timeout)

    def _record(self, rank: int, state: str) -> None:
        # Called with _departures_lock held.
        self._departures[rank] = state
        if len(self._departures) == self._size:
            self._all_departed.set()

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
                sock, address = self._listener.accept()
            except BlockingIOError:
                return
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            _keep_alive(sock, self._timeout)
            self._selector.register(sock, selectors.EVENT_READ, _Connection(sock, host=_remote(address[0])))

    def _receive(self, connection: _Connection) -> None:
        silent = False
        try:
            chunk = connection.sock.recv(_RECV_SIZE)
        except BlockingIOError:
            return
        except OSError as exc:
            chunk = b""
            silent = exc.errno in (errno.ETIMEDOUT, errno.EHOSTUNREACH, errno.ENETUNREACH)
        if not chunk:
            self._close(connection)
            if connection.rank is None:
                return
            at = f"(at {connection.host}) " if connection.host else ""
            if silent:
                how = f"is unreachable: its host answered no TCP keepalive for {self._timeout} s"
                self._depart(connection.rank, f"{at}{how} (the host, or the link to it, is down)")
            else:
                self._depart(connection.rank, f"{at}closed its connection without saying bye (did it crash?)")
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
            self._record(rank, state)
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
