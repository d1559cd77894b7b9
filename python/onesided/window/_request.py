"""Requests of the request-based operations (Rput, Rget, Raccumulate,
Rget_accumulate, Rfetch_and_op, Rcompare_and_swap, Rrmw, Rrmw2), with
mpi4py's ``MPI.Request`` names, and awaitable in asyncio (``await req``,
see ``onesided.window._aio``).

``MPI.Request.Waitall`` and its relatives cannot take these requests: they
are not MPI handles (mpi4py type-checks its arguments in C, and onesided
never links MPI). Use ``onesided.Request.Waitall`` (and ``Testall``,
``Waitany``, ``Testany``), which behave as mpi4py's.
"""

from __future__ import annotations

from typing import Any, Generator, Sequence


UNDEFINED = -32766  # MPI_UNDEFINED (MPICH and Open MPI)


class Request:
    """A request-based operation (Rput, Rget, Raccumulate, Rget_accumulate,
    Rfetch_and_op, Rcompare_and_swap, Rrmw, Rrmw2), or an awaitable flush's.
    It completes by itself, and also at any Flush, Unlock or
    Fence covering its target; its buffers stay referenced until then. (In
    nasty mode the operation is held until Wait, Test or a flush.)

    As an ``MPI.Request``: once Wait (or a Test that returned True) has seen
    it complete, it is inactive, ``bool(req)`` is False and further Wait or
    Test calls return True at once. A request to ``PROC_NULL`` is inactive
    from the start.

    ``await req`` (in asyncio) is ``Wait`` without blocking the event loop:
    it returns True once the operation is complete (a fetched result is
    valid), raises what ``Wait`` would, and returns at once, without
    suspending, for a request already complete. The loop waits on one
    eventfd per process that completions of awaited requests write to; it
    does not poll (``onesided.window._aio``)."""

    __slots__ = ("_core", "_keep")

    def __init__(self, core: Any = None, keep: tuple[Any, ...] = ()) -> None:
        self._core = core  # None once complete (or for PROC_NULL)
        self._keep = keep  # buffers in use until completion

    def __bool__(self) -> bool:
        return self._core is not None

    def __reduce__(self) -> Any:
        raise ValueError("cannot serialize 'onesided.Request' instance")

    def Wait(self, status: Any = None) -> bool:
        """Return True once the operation is complete at origin and target
        (its result is valid). ``status`` is accepted and left alone."""
        if self._core is not None:
            self._core._wait()
            self._core = None
            self._keep = ()
        return True

    def __await__(self) -> Generator[Any, None, bool]:
        if self._core is not None and not self._core._done():
            from . import _aio  # here, not at import: asyncio takes 40-140 ms to import

            yield from _aio.completion(self._core)
        return self.Wait()

    def Test(self, status: Any = None) -> bool:
        """Drive progress once; True once the operation is complete."""
        if self._core is None:
            return True
        done: bool = self._core._test()
        if done:
            self._core = None
            self._keep = ()
        return done

    def Get_status(self, status: Any = None) -> bool:
        """Whether the operation is complete, without making the request inactive."""
        return self._core is None or bool(self._core._test())

    def Free(self) -> None:
        """Wait for the operation, then drop the request (onesided cannot
        abandon an operation whose buffers it still uses)."""
        self.Wait()

    free = Free

    @classmethod
    def Waitall(cls, requests: Sequence["Request"], statuses: Any = None) -> bool:
        """Wait for every request (each complete at origin and target); True."""
        for r in requests:
            r.Wait()
        return True

    @classmethod
    def Testall(cls, requests: Sequence["Request"], statuses: Any = None) -> bool:
        """True (and every request inactive) once all are complete."""
        if all(r.Get_status() for r in requests):
            return cls.Waitall(requests)
        return False

    @classmethod
    def Waitany(cls, requests: Sequence["Request"], status: Any = None) -> int:
        """Wait for one active request to complete; its index, or
        ``UNDEFINED`` (-32766) when none is active."""
        active = [i for i, r in enumerate(requests) if r]
        if not active:
            return UNDEFINED
        while True:
            for i in active:
                if requests[i].Test():
                    return i

    @classmethod
    def Testany(cls, requests: Sequence["Request"], status: Any = None) -> tuple[int, bool]:
        """``(index, True)`` for a completed active request, ``(UNDEFINED,
        True)`` when none is active, else ``(UNDEFINED, False)``."""
        active = [i for i, r in enumerate(requests) if r]
        if not active:
            return UNDEFINED, True
        for i in active:
            if requests[i].Test():
                return i, True
        return UNDEFINED, False
