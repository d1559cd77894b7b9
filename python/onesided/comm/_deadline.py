"""A deadline on this thread's collective waits.

A window left by an exception (``with Window.Allocate(...) as win:`` whose
body raised at one rank) is freed on the way out, and ``Free`` is
collective: the other ranks may never come to it (they wait in a ``Fence``
for this one, or raised elsewhere). :func:`deadline` bounds such a wait:
inside it, a collective of onesided's ``COMM_WORLD`` or of a window over an
mpi4py communicator (:mod:`onesided.comm._polled`) that has waited past the
deadline raises :class:`DeadlineExpired`, as an interrupt would, leaving what
an interrupted collective leaves (docs/semantics.md, "Interrupted calls").

Guarantees
----------
* Outside a :func:`deadline` block nothing changes: waits are unbounded.
* The deadline belongs to the thread (a context variable): another
  thread's collectives are not bounded by it.
* Checked each time a wait wakes (at least every 100 ms), so it raises at
  most about 100 ms after the deadline.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from .._errors import Error

__all__ = ["DeadlineExpired", "check", "deadline"]

_until: ContextVar[tuple[float, str] | None] = ContextVar("onesided_collective_deadline", default=None)


class DeadlineExpired(Error):
    """A collective waited past the deadline of :func:`deadline`: its
    peers did not come. The collective is cut in the middle."""


@contextmanager
def deadline(seconds: float, what: str) -> Iterator[None]:
    """Bound this thread's collective waits inside the block to ``seconds``
    from now; ``what`` names the call in the error."""
    token = _until.set((time.monotonic() + seconds, what))
    try:
        yield
    finally:
        _until.reset(token)


def check() -> None:
    """Raise :class:`DeadlineExpired` if this thread is past its deadline."""
    bound = _until.get()
    if bound is not None and time.monotonic() > bound[0]:
        raise DeadlineExpired(f"{bound[1]}: the other ranks did not join it in time")
