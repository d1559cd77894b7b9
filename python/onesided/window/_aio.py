"""asyncio support: ``await req`` for every onesided Request, and the
awaitable flushes (``Window.flush_async``, ``Window.flush_all_async``).

How a coroutine waits without busy polling: the process has one eventfd
(``_core._ready_fd()``), not one per request. Awaiting a request that is
not yet complete arms it; the thread that completes an armed request (the
progress engine's background thread, usually) writes to the eventfd. Each
event loop that awaits requests registers one reader on the eventfd with
``loop.add_reader``, only while it awaits something; the reader drains the
eventfd and wakes the coroutines whose requests are complete. A loop that
drains a wake-up meant for another loop's requests (two threads, each with
its own loop) hands it on with ``call_soon_threadsafe``.

Guarantees:

- ``await req`` returns what ``req.Wait()`` returns, once the operation is
  complete at origin and target (a fetched result is valid), and raises the
  ``onesided.Error`` that ``Wait`` would. It never blocks the event loop:
  other coroutines run while the operation is in flight.
- A request that is already complete (every request on the shared-memory
  path, where operations complete in their call) is awaited without
  suspending, without arming and without touching the eventfd.
- Cancelling the awaiting task leaves the operation in flight (onesided
  cannot abandon it; its buffers stay referenced by the Request) and removes
  the loop's reader once nothing else awaits: no reader outlives its use.
- Every 100 ms while a loop awaits requests, it looks at them once as
  ``Test`` does, so a target that died, on this host or another, is
  reported (as by ``Wait``) rather than awaited for ever. That is a watchdog, not the
  completion path: completions arrive through the eventfd.
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any

from .. import _core

__all__ = ["completion"]

_WATCHDOG = 0.1  # seconds between looks at the awaited requests (dead targets)

_lock = threading.Lock()  # guards _readers (loops of several threads share the one eventfd)
_readers: dict[asyncio.AbstractEventLoop, "_Reader"] = {}


class _Reader:
    """One event loop's waiters on the eventfd. Used on its loop's thread
    only, except ``poke``, which other loops call through
    ``call_soon_threadsafe``."""

    def __init__(self, loop: asyncio.AbstractEventLoop, fd: int) -> None:
        self.loop = loop
        self.fd = fd
        self.waiting: dict[asyncio.Future[None], Any] = {}  # future -> core request
        self.watchdog: asyncio.TimerHandle | None = None

    def add(self, future: asyncio.Future[None], core: Any) -> None:
        if not self.waiting:
            self.loop.add_reader(self.fd, self._on_ready)
            self.watchdog = self.loop.call_later(_WATCHDOG, self._watch)
        self.waiting[future] = core
        future.add_done_callback(self._forget)

    def _forget(self, future: asyncio.Future[None]) -> None:
        # Done, failed or cancelled: the same clean-up.
        self.waiting.pop(future, None)
        if self.waiting:
            return
        self.loop.remove_reader(self.fd)
        if self.watchdog is not None:
            self.watchdog.cancel()
            self.watchdog = None
        with _lock:
            if _readers.get(self.loop) is self and not self.waiting:
                del _readers[self.loop]

    def _on_ready(self) -> None:
        try:
            os.read(self.fd, 8)  # resets the eventfd's counter
        except BlockingIOError:
            pass  # another loop drained it first: it pokes us
        with _lock:
            others = [r for r in _readers.values() if r is not self]
        for r in others:
            r.loop.call_soon_threadsafe(r.poke)
        self.poke()

    def poke(self) -> None:
        """Wakes the coroutines whose requests are complete."""
        for future, core in list(self.waiting.items()):
            if not future.done() and core._done():
                future.set_result(None)

    def _watch(self) -> None:
        self.watchdog = None
        for future, core in list(self.waiting.items()):
            if future.done():
                continue
            try:
                if core._test():
                    future.set_result(None)
            except Exception as e:  # the target died: what Wait would raise
                future.set_exception(e)
        if self.waiting:
            self.watchdog = self.loop.call_later(_WATCHDOG, self._watch)


def completion(core: Any) -> asyncio.Future[None]:
    """A future of the running loop that is done once the core request
    ``core`` is complete (its result is then valid; ``Wait`` on it returns at
    once, or raises if the operation failed). Already complete: a done
    future, and the eventfd is not touched."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[None] = loop.create_future()
    if core._done():
        future.set_result(None)
        return future
    # Registered before arming: a completion that rings between the two is
    # then surely seen by this loop's reader (or handed on to it).
    with _lock:
        reader = _readers.get(loop)
        if reader is None:
            reader = _readers[loop] = _Reader(loop, _core._ready_fd())
    reader.add(future, core)
    if not core._arm():
        # Completed meanwhile: nothing will ring. The awaiting coroutine
        # goes on without yielding (a done future), before the loop would
        # run the done callback, so the reader is let go here, at once.
        future.remove_done_callback(reader._forget)
        future.set_result(None)
        reader._forget(future)
    return future
