"""What each rank of a :class:`onesided.Ranks` runs: cells, one after another,
in one namespace that lives as long as the rank.

Started as ``python -m onesided run -n N -m onesided.notebook._cell_server`` by the
kernel, with the variables of :mod:`onesided.notebook._ranks_channel`.

Guarantees
----------
* Everything the rank writes to its file descriptors 1 and 2 reaches the
  kernel, including C libraries' output and crash messages; Python's stdout
  is line-buffered so lines arrive as they are printed.
* A cell's reply follows the cell's end marker on both streams, so the
  kernel has every line of the cell when it has the reply.
* SIGINT raises ``KeyboardInterrupt`` only while a cell runs (it lands when
  the rank next runs Python code); between cells it is ignored, so a late
  interrupt never breaks the rank's loop.
* If the kernel goes away (its connection closes) the rank exits; if that
  happens while a cell runs the rank kills itself with SIGTERM, so a cell
  stuck for ever cannot outlive the kernel (the launcher then stops the
  other ranks and removes their shared memory).
"""

from __future__ import annotations

import ast
import linecache
import os
import pickle
import queue
import signal
import socket
import sys
import threading
import traceback
from types import CodeType, FrameType
from typing import Any

from ..run._spawn import _unpack
from ._ranks_channel import (
    ENV_ADDRESS,
    ENV_OUTPUT,
    ENV_TOKEN,
    HELLO,
    NotSent,
    cell_end,
    output_fifo,
    receive_frame,
    send_frame,
)


class _CellServer:
    """One rank's side of the channel: receives cells, runs them, replies."""

    def __init__(self, sock: socket.socket, rank: int) -> None:
        self._sock = sock
        self._rank = rank
        self._namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": __builtins__}
        self._requests: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        # Read by the SIGINT handler and the reader thread; set only here.
        self._in_cell = False

    def serve(self) -> None:
        """Run cells until told to stop or the kernel goes away."""
        signal.signal(signal.SIGINT, self._on_sigint)
        threading.Thread(target=self._read_requests, name="onesided-cell-requests", daemon=True).start()
        while True:
            request = self._requests.get()
            if request is None or request[0] == "stop":
                return
            _, cell, kind, payload = request
            value, error = self._run(cell, kind, payload)
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            for fd in (1, 2):
                os.write(fd, cell_end(cell))
            send_frame(self._sock, pickle.dumps(("done", cell, value, error)))

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        if self._in_cell:
            raise KeyboardInterrupt

    def _read_requests(self) -> None:
        try:
            while (frame := receive_frame(self._sock)) is not None:
                self._requests.put(pickle.loads(frame))
        except OSError:
            pass
        # The kernel is gone. Idle, the loop ends on None; inside a cell that
        # may never return (a collective its peers will not enter, a C call)
        # only a signal ends the rank.
        if self._in_cell:
            os.kill(os.getpid(), signal.SIGTERM)
        self._requests.put(None)

    def _run(self, cell: int, kind: str, payload: Any) -> tuple[bytes | None, tuple[str, str] | None]:
        """Run one request; return (pickled value or None, error or None)."""
        try:
            self._in_cell = True
            try:
                value = self._evaluate(cell, kind, payload)
            finally:
                self._in_cell = False
        except BaseException as exc:  # SystemExit and KeyboardInterrupt too: the rank lives on
            self._in_cell = False
            return None, (type(exc).__name__, _format_user_traceback(exc))
        if value is None:
            return None, None
        try:
            return pickle.dumps(value), None
        except Exception as exc:
            if kind == "gather":
                return None, (type(exc).__name__, f"{payload} cannot be sent to the kernel: {exc}\n")
            return pickle.dumps(NotSent(repr(value), str(exc))), None

    def _evaluate(self, cell: int, kind: str, payload: Any) -> Any:
        if kind == "gather":
            if payload not in self._namespace:
                raise NameError(f"name {payload!r} is not defined on rank {self._rank}")
            return self._namespace[payload]
        if kind == "function":
            fn, args, kwargs = _unpack(payload, self._namespace)
            return fn(*args, **kwargs)
        body, last = _compile_cell(payload, f"<cell {cell}>")
        exec(body, self._namespace)
        return None if last is None else eval(last, self._namespace)


def _compile_cell(source: str, filename: str) -> tuple[CodeType, CodeType | None]:
    """Compile a cell as IPython does: a final expression is the cell's value.
    The source is registered with linecache so tracebacks show its lines."""
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    tree = ast.parse(source, filename)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = compile(ast.Expression(tree.body.pop().value), filename, "eval")
    return compile(tree, filename, "exec"), last


def _format_user_traceback(exc: BaseException) -> str:
    """The traceback without this module's frames (the loop above the cell,
    the SIGINT handler below it)."""
    report = traceback.TracebackException.from_exception(exc)
    report.stack = traceback.StackSummary.from_list(
        [frame for frame in report.stack if frame.filename != __file__]
    )
    return "".join(report.format())


def _redirect_output(directory: str, rank: int) -> None:
    """Make the rank's FIFOs its stdout and stderr, for C code as for Python."""
    for fd, stream in ((1, "out"), (2, "err")):
        target = os.open(output_fifo(directory, rank, stream), os.O_WRONLY)
        os.dup2(target, fd)
        os.close(target)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    sys.stderr.reconfigure(line_buffering=True)  # type: ignore[union-attr]


def main() -> int:
    """Connect to the kernel and serve cells; the exit status of the rank."""
    # Taken out of the environment: code run in cells, and what it starts,
    # has no business with the channel.
    host, _, port = os.environ.pop(ENV_ADDRESS).rpartition(":")
    token = os.environ.pop(ENV_TOKEN).encode("ascii")
    directory = os.environ.pop(ENV_OUTPUT)

    from ..comm._world import world

    rank = world().Get_rank()
    _redirect_output(directory, rank)
    sock = socket.create_connection((host, int(port)))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    send_frame(sock, token + HELLO.pack(rank, os.getpid()))
    try:
        _CellServer(sock, rank).serve()
    finally:
        sock.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
