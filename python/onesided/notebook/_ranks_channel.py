"""The control channel between a :class:`onesided.Ranks` and its ranks.

The kernel (the process that made the ``Ranks``) listens on a TCP socket on
127.0.0.1 and starts the ranks through ``python -m onesided run`` with these
variables, which the launcher passes on to every rank::

    ONESIDED_RANKS_ADDRESS  "127.0.0.1:port" the ranks connect back to
    ONESIDED_RANKS_TOKEN    per-Ranks secret (32 hex digits)
    ONESIDED_RANKS_OUTPUT   private directory (mode 0700) holding two FIFOs
                            per rank, ``R.out`` and ``R.err``

Each rank makes the FIFOs its file descriptors 1 and 2 (so the kernel sees
everything it writes, from Python, from C, or in a crash message), connects,
and sends one raw frame ``token[32] rank:u32 pid:u32``.  The kernel checks the
token before it unpickles anything from that connection; only then do
frames carry pickles, in both directions.  A frame is ``length:u64 payload``
(unsigned big-endian).

Kernel to rank: ``("run", cell, kind, payload)`` with ``kind`` one of
``"source"`` (the code's text), ``"function"``
(:func:`onesided.run._spawn._payload`'s bytes) or ``"gather"`` (a
variable's name); and ``("stop",)``.

Rank to kernel, one per ``run``: ``("done", cell, value, error)`` where
``value`` is the pickled result (or ``None``) and ``error`` is ``None`` or
``(exception type name, formatted traceback)``.  Before sending it, the rank
writes :func:`cell_end` for that cell into both FIFOs, so the kernel knows
it has every line the rank wrote during the cell once it has read both
markers and the reply.
"""

from __future__ import annotations

import re
import socket
import struct

ENV_ADDRESS = "ONESIDED_RANKS_ADDRESS"
ENV_TOKEN = "ONESIDED_RANKS_TOKEN"
ENV_OUTPUT = "ONESIDED_RANKS_OUTPUT"

TOKEN_BYTES = 32
"""Length of the token as sent (hex digits)."""

HELLO = struct.Struct(">II")
FRAME_HEADER = struct.Struct(">Q")

CELL_END = re.compile(rb"\x00onesided-cell-end (\d+)\x00")
"""A rank's end-of-cell marker in its output. It holds no newline, so a
marker split across two reads is always in the unfinished last line."""


class NotSent:
    """Stands for a cell's value that could not be pickled: its ``repr`` on
    the rank, and why pickling failed."""

    def __init__(self, text: str, reason: str) -> None:
        self.text = text
        self.reason = reason

    def __repr__(self) -> str:
        return self.text


def cell_end(cell: int) -> bytes:
    """The marker a rank writes to its stdout and stderr after ``cell``
    (short enough for one atomic write to a pipe)."""
    return b"\x00onesided-cell-end %d\x00" % cell


def output_fifo(directory: str, rank: int, stream: str) -> str:
    """The FIFO carrying ``stream`` ("out" or "err") of ``rank``."""
    return f"{directory}/{rank}.{stream}"


def send_frame(sock: socket.socket, payload: bytes) -> None:
    """Send ``payload`` as one frame."""
    sock.sendall(FRAME_HEADER.pack(len(payload)) + payload)


def receive_frame(sock: socket.socket) -> bytes | None:
    """Read one frame from a blocking socket; ``None`` at end of stream."""
    header = _receive_exactly(sock, FRAME_HEADER.size)
    if header is None:
        return None
    (length,) = FRAME_HEADER.unpack(header)
    payload = _receive_exactly(sock, length)
    if payload is None:
        raise ConnectionError("the connection closed inside a frame")
    return payload


def _receive_exactly(sock: socket.socket, size: int) -> bytes | None:
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(min(size - len(data), 1 << 20))
        if not chunk:
            if data:
                raise ConnectionError("the connection closed inside a frame")
            return None
        data += chunk
    return bytes(data)


class FrameReader:
    """Splits the bytes of a non-blocking connection into frames."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        """Add received bytes; return the frames they complete, in order."""
        self._buffer += data
        frames = []
        while len(self._buffer) >= FRAME_HEADER.size:
            (length,) = FRAME_HEADER.unpack_from(self._buffer)
            end = FRAME_HEADER.size + length
            if len(self._buffer) < end:
                break
            frames.append(bytes(self._buffer[FRAME_HEADER.size : end]))
            del self._buffer[:end]
        return frames

    def has_partial_frame(self) -> bool:
        """Whether bytes of an unfinished frame are waiting."""
        return bool(self._buffer)
