"""Requests of the request-based operations (Rput, Rget, Raccumulate,
Rget_accumulate, Rrmw, Rrmw2), with mpi4py's ``MPI.Request`` names."""

from __future__ import annotations

from typing import Any


class Request:
    """A request-based operation (Rput, Rget, Raccumulate, Rget_accumulate,
    Rrmw, Rrmw2). It completes by itself, and also at any Flush, Unlock or
    Fence covering its target; its buffers stay referenced until then. (In
    nasty mode the operation is held until Wait, Test or a flush.)"""

    __slots__ = ("_core", "_keep")

    def __init__(self, core: Any, keep: tuple[Any, ...]) -> None:
        self._core = core
        self._keep = keep  # buffers in use until completion

    def Wait(self) -> None:
        """Return once the operation is complete at origin and target (its
        result is valid)."""
        self._core._wait()
        self._keep = ()

    def Test(self) -> bool:
        """Drive progress once; True once the operation is complete."""
        done: bool = self._core._test()
        if done:
            self._keep = ()
        return done

    @staticmethod
    def Waitall(requests: "list[Request]") -> None:
        """Wait for every request (each complete at origin and target)."""
        for r in requests:
            r.Wait()
