"""COMM_WORLD without MPI: the ranks started by ``python -m onesided run``.

:func:`onesided.comm._world.world` returns this process's :class:`Comm`
(the choice of world is made there, above this module and
:mod:`onesided.comm._mpi_job`).  Under
the launcher it spans the ``ONESIDED_SIZE`` ranks of the job and its
collectives are served by the launcher's coordinator (see
:mod:`onesided.comm._coordinator`) over TCP loopback.
Started by an MPI launcher (mpiexec, srun), the world is no Comm but
mpi4py's ``MPI.COMM_WORLD`` itself (:mod:`onesided.comm._mpi_job`; an error
without mpi4py, never a world of one rank). Started any other way, the process is a world of one rank whose
collectives complete locally.

Guarantees
----------
* A collective never hangs because another rank is gone: if a rank exits,
  crashes or calls a different collective, every rank waiting in (or later
  entering) a collective gets :class:`WorldError` naming that rank.
* After a :class:`WorldError` the world stays broken: every later collective
  raises it again without talking to the coordinator.
* A :class:`Comm` may be shared by threads; its collectives run one at a time,
  so concurrent threads must still enter them in the same order on every rank.

Wire protocol
-------------
Everything a non-Python client (e.g. the C++ core) needs to take part.

The launcher sets, for each rank::

    ONESIDED_COORD  "host:port" of the coordinator (127.0.0.1 on one host, an
                    address the hosts reach across hosts; "[v6]:port" for IPv6)
    ONESIDED_RANK   this rank, 0 <= rank < size
    ONESIDED_SIZE   number of ranks
    ONESIDED_TOKEN  per-job secret (ASCII) that authenticates ranks, so that
                    no other local process can inject pickles into the job

Each rank opens one TCP connection (TCP_NODELAY) and keeps it for its whole
life.  Integers are unsigned big-endian.  Every message is a frame::

    frame   := length:u64 payload[length]
    payload := type:u8 body

Client to coordinator:

``H`` hello: ``rank:u32 size:u32 token[rest]``
    Must be the first frame; no reply when accepted.  A bad token, rank or
    size, or a rank that is already connected or has already exited, gets an
    ``E`` reply and the connection is closed.
``C`` collective: ``seq:u64 kind_len:u16 kind[kind_len] data[rest]``
    ``seq`` numbers this rank's collectives from 0.  ``kind`` is an ASCII label
    that must be byte-identical on all ranks for the same ``seq``.  ``data``
    is opaque to the coordinator.  The client then waits for the reply.
``B`` bye: empty body
    Sent at interpreter exit, after which the client closes the connection.

Coordinator to client, exactly one reply per ``C``, in order:

``R`` result: ``seq:u64 n:u32`` then ``n`` times ``len:u64 data[len]``
    The data sent by ranks 0..n-1 for collective ``seq``.
``E`` error: ``message[rest]`` (UTF-8)
    The collective failed and the world is broken: every later ``C`` from any
    rank is also answered with ``E``.

Collective ``seq`` completes when all ranks have sent it with the same kind;
every rank then gets the same ``R`` (so every collective is an allgather).  It
fails, with ``E`` to each rank that has sent it, as soon as two ranks send
different kinds, or a rank departs: says bye, closes its connection without
bye, or is reported exited by the launcher (which also covers ranks that never
connected).  A departure breaks the world even if no collective is pending,
because no later collective could complete.

The Python client uses pickled objects as ``data`` and these kinds:
``barrier`` (empty data), ``allgather``, ``bcast(root=R)`` (data empty except
at the root) and ``gather(root=R)``; putting the root in the kind makes ranks
that disagree about the root fail instead of exchanging the wrong objects.
"""

from __future__ import annotations

import atexit
import os
import pickle
import select
import socket
import struct
import sys
import threading
from collections.abc import Sequence
from typing import Any, NoReturn

from .._errors import Error
from ._deadline import check as check_deadline

__all__ = ["Comm", "WorldError"]

ENV_COORD = "ONESIDED_COORD"
ENV_RANK = "ONESIDED_RANK"
ENV_SIZE = "ONESIDED_SIZE"
ENV_TOKEN = "ONESIDED_TOKEN"

# Frame types (the first payload byte) and the fixed-size parts of bodies.
MSG_HELLO = b"H"
MSG_COLLECTIVE = b"C"
MSG_BYE = b"B"
MSG_RESULT = b"R"
MSG_ERROR = b"E"
FRAME_HEADER = struct.Struct(">Q")
HELLO_HEADER = struct.Struct(">II")
COLLECTIVE_HEADER = struct.Struct(">QH")
RESULT_HEADER = struct.Struct(">QI")
ITEM_HEADER = struct.Struct(">Q")

_SCRATCH_SIZE = 1 << 16
"""Replies up to this size are read with one recv (barriers, small objects)."""


class WorldError(Error, RuntimeError):
    """A collective cannot complete: a rank left, failed or disagreed.

    The message names the rank(s) responsible and what they were doing.
    """


def encode_frame(payload: bytes) -> bytes:
    """Return ``payload`` prefixed with its length, ready to send."""
    return FRAME_HEADER.pack(len(payload)) + payload


def encode_result(seq: int, items: Sequence[bytes | memoryview]) -> bytes:
    """Return the ``R`` frame carrying ``items`` (one per rank) for ``seq``."""
    parts: list[bytes | memoryview] = [MSG_RESULT, RESULT_HEADER.pack(seq, len(items))]
    for item in items:
        parts.append(ITEM_HEADER.pack(len(item)))
        parts.append(item)
    return encode_frame(b"".join(parts))


def decode_result(body: memoryview) -> tuple[int, list[memoryview]]:
    """Split an ``R`` body (without its type byte) into ``(seq, items)``.

    The items are views into ``body``, not copies.
    """
    seq, count = RESULT_HEADER.unpack_from(body)
    offset = RESULT_HEADER.size
    items = []
    for _ in range(count):
        (length,) = ITEM_HEADER.unpack_from(body, offset)
        offset += ITEM_HEADER.size
        items.append(body[offset : offset + length])
        offset += length
    return seq, items


class Comm:
    """A communicator over all ranks of the job (mpi4py-style names).

    Instances come from :func:`world`.  Collectives pickle their objects;
    every rank must call the same collectives in the same order.
    """

    def __init__(
        self,
        rank: int = 0,
        size: int = 1,
        address: tuple[str, int] | None = None,
        token: bytes = b"",
    ) -> None:
        """Describe rank ``rank`` of ``size``; ``address`` is the coordinator.

        Without an address the world must have a single rank.  Nothing is
        connected until the first collective.
        """
        if not 0 <= rank < size:
            raise ValueError(f"rank {rank} is outside a world of size {size}")
        if address is None and size != 1:
            raise ValueError("a world of several ranks needs a coordinator address")
        self._rank = rank
        self._size = size
        self._address = address
        self._where = "" if address is None else f"{address[0]}:{address[1]}"
        self._token = token
        # One collective at a time: a frame must not interleave with another
        # thread's, and replies arrive in request order.
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._pid = os.getpid()
        self._seq = 0
        self._failure: str | None = None
        self._scratch = bytearray(_SCRATCH_SIZE)

    def Get_rank(self) -> int:
        """Return this process's rank."""
        return self._rank

    def Get_size(self) -> int:
        """Return the number of ranks in the world."""
        return self._size

    # mpi4py's property names for the same two values.
    rank = property(Get_rank)
    """This process's rank."""

    size = property(Get_size)
    """The number of ranks in the world."""

    def Barrier(self) -> None:
        """Return once every rank has entered this barrier."""
        self._exchange("barrier", b"")

    barrier = Barrier

    def allgather(self, obj: Any) -> list[Any]:
        """Return the objects passed by all ranks, indexed by rank."""
        if self._is_local():
            return [obj]
        items = self._exchange("allgather", _dumps(obj))
        return [pickle.loads(item) for item in items]

    def bcast(self, obj: Any, root: int = 0) -> Any:
        """Return ``root``'s object at every rank (other ranks' ``obj`` is ignored).

        Non-root ranks get an unpickled copy; the root gets ``obj`` itself.
        """
        self._check_root(root)
        if self._is_local():
            return obj
        data = _dumps(obj) if self._rank == root else b""
        items = self._exchange(f"bcast(root={root})", data)
        return obj if self._rank == root else pickle.loads(items[root])

    def gather(self, obj: Any, root: int = 0) -> list[Any] | None:
        """Return all ranks' objects, indexed by rank, at ``root``; ``None`` elsewhere."""
        self._check_root(root)
        if self._is_local():
            return [obj]
        items = self._exchange(f"gather(root={root})", _dumps(obj))
        return [pickle.loads(item) for item in items] if self._rank == root else None

    def Abort(self, errorcode: int = 1) -> NoReturn:
        """Exit this process at once with ``errorcode``, skipping cleanup.

        Under the launcher a non-zero code makes it stop every other rank.
        """
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # closed or broken stream: still abort
                pass
        try:
            sys.stderr.write(f"onesided: rank {self._rank} of {self._size} called Abort({errorcode})\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os._exit(errorcode)

    def __repr__(self) -> str:
        if self._address is None:
            return f"Comm(rank={self._rank}, size={self._size})"
        return f"Comm(rank={self._rank}, size={self._size}, coordinator='{self._where}')"

    def _is_local(self) -> bool:
        # A world of one rank has nothing to wait for, even under the launcher.
        return self._size == 1

    def _check_root(self, root: int) -> None:
        if not 0 <= root < self._size:
            raise ValueError(f"root {root} is outside a world of size {self._size}")

    def _exchange(self, kind: str, data: bytes) -> Sequence[bytes | memoryview]:
        """Run collective ``kind`` contributing ``data``; return every rank's data."""
        if self._is_local():
            return [data]
        with self._lock:
            if self._failure is not None:
                raise WorldError(self._failure)
            seq = self._seq
            try:
                sock = self._connection()
                kind_bytes = kind.encode("ascii")
                header = MSG_COLLECTIVE + COLLECTIVE_HEADER.pack(seq, len(kind_bytes)) + kind_bytes
                # One buffer, one send: cheap for small frames, one copy for large ones.
                sock.sendall(b"".join([FRAME_HEADER.pack(len(header) + len(data)), header, data]))
                reply = _receive_frame(sock, self._scratch)
            except WorldError as exc:
                self._failure = str(exc)
                raise
            except OSError as exc:
                where = f"the onesided coordinator at {self._where}"
                self._fail(f"no connection to {where} during {kind} #{seq}: {exc}")
            except BaseException:
                # e.g. KeyboardInterrupt mid-frame: the stream position is unknown.
                self._failure = f"{kind} #{seq} was interrupted on rank {self._rank}; the world is unusable"
                raise
            kind_byte, body = reply[:1], memoryview(reply)[1:]
            if kind_byte == MSG_ERROR:
                self._fail(bytes(body).decode("utf-8", "replace"))
            if kind_byte != MSG_RESULT:
                self._fail(f"protocol error: unexpected reply type {kind_byte!r} to {kind} #{seq}")
            reply_seq, items = decode_result(body)
            if reply_seq != seq or len(items) != self._size:
                self._fail(
                    f"protocol error: reply for collective #{reply_seq} with {len(items)} items "
                    f"to {kind} #{seq} in a world of {self._size}"
                )
            self._seq += 1
            return items

    def _fail(self, message: str) -> NoReturn:
        self._failure = message
        raise WorldError(message)

    def _connection(self) -> socket.socket:
        """Return the coordinator connection, opening it on first use."""
        if self._pid != os.getpid():
            raise WorldError(
                f"rank {self._rank}'s world was opened by process {self._pid}; "
                "a forked child cannot use it"
            )
        if self._sock is None:
            assert self._address is not None  # guaranteed by _is_local() being false
            sock = socket.create_connection(self._address)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            hello = MSG_HELLO + HELLO_HEADER.pack(self._rank, self._size) + self._token
            sock.sendall(encode_frame(hello))
            self._sock = sock
            atexit.register(self._say_bye)
        return self._sock

    def _say_bye(self) -> None:
        """Tell the coordinator this rank is leaving (registered with atexit)."""
        sock = self._sock
        if sock is None or self._pid != os.getpid():
            return  # a forked child must not close its parent's connection
        if not self._lock.acquire(blocking=False):
            # A daemon thread is blocked in a collective and owns the socket;
            # shutting it down is the only safe signal (the coordinator sees
            # the connection close instead of a bye).
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        try:
            sock.sendall(encode_frame(MSG_BYE))
        except OSError:
            pass  # the coordinator is gone; nobody to tell
        finally:
            sock.close()
            self._sock = None
            self._failure = f"rank {self._rank} has left the world (interpreter exit)"
            self._lock.release()


def _dumps(obj: Any) -> bytes:
    return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)


def _receive_frame(sock: socket.socket, scratch: bytearray) -> bytes | bytearray:
    """Read one frame and return its payload.

    The protocol is strictly one reply per request, so nothing can follow the
    frame on the stream and reading ahead into ``scratch`` is safe; a small
    reply then costs a single ``recv``.
    """
    view = memoryview(scratch)
    received = 0
    while received < FRAME_HEADER.size:
        received += _receive_into(sock, view[received:])
    (length,) = FRAME_HEADER.unpack_from(scratch)
    end = FRAME_HEADER.size + length
    if end <= len(scratch):
        while received < end:
            received += _receive_into(sock, view[received:end])
        return bytes(view[FRAME_HEADER.size : end])
    payload = bytearray(length)
    payload[: received - FRAME_HEADER.size] = view[FRAME_HEADER.size : received]
    payload_view = memoryview(payload)
    received -= FRAME_HEADER.size
    while received < length:
        received += _receive_into(sock, payload_view[received:])
    return payload


_SIGNAL_CHECK = 0.1
"""A rank waiting for the coordinator wakes this often (seconds) to let
Python run its signal handlers: a signal the kernel gave to another thread
(the core's progress thread) does not interrupt this thread's recv."""


def _receive_into(sock: socket.socket, view: memoryview) -> int:
    try:
        count = sock.recv_into(view, 0, socket.MSG_DONTWAIT)
    except BlockingIOError:
        # Not there yet: wait in slices, each a return to the interpreter,
        # where a pending KeyboardInterrupt is raised (the caller marks the
        # world unusable: the stream position is unknown).
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        while not poller.poll(_SIGNAL_CHECK * 1000):
            check_deadline()
        count = sock.recv_into(view)
    if count == 0:
        raise ConnectionError("the coordinator closed the connection")
    return count
