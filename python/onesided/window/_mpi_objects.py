"""onesided's own stand-ins for the mpi4py objects an ``MPI.Win`` hands out.

A window created over an mpi4py communicator (or given an ``MPI.Info``)
returns mpi4py's own objects: ``MPI.Info`` from ``Get_info``, ``MPI.Group``
from ``Get_group``, ``MPI.buffer`` from ``tomemory`` and ``Shared_query``.
A window over onesided's ``COMM_WORLD`` (the launcher, a notebook) returns
these instead, which keep the names and behaviour code uses:

* :class:`Info`: a ``dict`` that also has ``MPI.Info``'s methods (``Get``,
  ``Set``, ``Delete``, ``Get_nkeys``, ``Get_nthkey``, ``Dup``, ``Free``);
* :class:`Group`: the window's processes, with ``MPI.Group``'s ``Get_size``,
  ``Get_rank``, ``Incl``, ``Excl``, ``Free``; iterating over it gives its
  members' ranks in the window, so it can be passed to ``Post``/``Start``;
* :class:`buffer`: a byte array over the window's memory, as ``MPI.buffer``
  (``m[:] = 0``, ``m[0:4] = b"..."``, ``len``, ``.address``, ``.nbytes``,
  ``.obj``, ``.readonly``, ``.cast``, ``.tobytes``, ``memoryview(m)``). It is a
  numpy ``uint8`` array, so numpy accepts it everywhere.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

import numpy as np

from .. import _core
from .._errors import ArgumentError, ArgumentTypeError


class Info(dict):  # type: ignore[type-arg]
    """Window hints: a ``dict`` of str to str with ``MPI.Info``'s method names."""

    @classmethod
    def Create(cls, items: Any = None) -> "Info":
        return cls(items or {})

    def Get(self, key: str) -> str | None:
        """The value of ``key``, or None (as ``MPI.Info.Get``)."""
        return self.get(key)

    def Set(self, key: str, value: str) -> None:
        self[str(key)] = str(value)

    def Delete(self, key: str) -> None:
        try:
            del self[key]
        except KeyError:
            raise KeyError(key) from None

    def Get_nkeys(self) -> int:
        return len(self)

    def Get_nthkey(self, n: int) -> str:
        return list(self)[n]

    def Dup(self) -> "Info":
        return Info(self)

    def Free(self) -> None:
        """Nothing to release (a dict); kept so MPI.Info code runs."""


class Group:
    """The processes of a window (or a subset of them), as ``MPI.Group``.

    ``ranks`` are ranks in the window; ``rank`` is this process's rank in
    the window. Iterating gives the members' window ranks in group order,
    which is what ``Window.Post`` and ``Window.Start`` take.
    """

    __slots__ = ("_ranks", "_me")

    def __init__(self, ranks: Iterable[int], rank: int) -> None:
        self._ranks = [int(r) for r in ranks]
        self._me = int(rank)

    def Get_size(self) -> int:
        return len(self._ranks)

    def Get_rank(self) -> int:
        """This process's rank in the group, or -32766 (``MPI.UNDEFINED``)
        when it is not a member."""
        return self._ranks.index(self._me) if self._me in self._ranks else UNDEFINED

    size = property(Get_size)
    rank = property(Get_rank)

    def Incl(self, ranks: Iterable[int]) -> "Group":
        """The group of the members ``ranks`` (ranks in this group), in that order."""
        return Group([self._ranks[self._check(r)] for r in ranks], self._me)

    def Excl(self, ranks: Iterable[int]) -> "Group":
        """This group without the members ``ranks`` (ranks in this group)."""
        drop = {self._check(r) for r in ranks}
        return Group([w for i, w in enumerate(self._ranks) if i not in drop], self._me)

    def Dup(self) -> "Group":
        return Group(self._ranks, self._me)

    def Free(self) -> None:
        """Nothing to release; kept so MPI.Group code runs."""

    def __iter__(self) -> Iterator[int]:
        return iter(self._ranks)

    def __len__(self) -> int:
        return len(self._ranks)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Group) and other._ranks == self._ranks

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"onesided.Group(window ranks {self._ranks})"

    def _check(self, r: int) -> int:
        r = int(r)
        if not 0 <= r < len(self._ranks):
            raise ArgumentError(f"rank {r} is not in a group of size {len(self._ranks)}")
        return r


UNDEFINED = -32766  # MPICH's and Open MPI's MPI_UNDEFINED


class buffer(np.ndarray):  # noqa: N801 - mpi4py's name
    """Window memory as bytes, as ``MPI.buffer``: a writable 1-d ``uint8``
    numpy array that also has ``address``, ``obj``, ``readonly``, ``cast``,
    ``toreadonly`` and ``release``. ``m[:] = 0`` fills, ``m[a:b] = b"..."``
    copies bytes in.

    ``address`` is the window's own base address (0 for an empty or dynamic
    window); numpy gives an empty array an address of its own, so ask
    ``m.address`` rather than numpy for it."""

    _obj: Any
    _address: int

    @classmethod
    def wrap(cls, memory: Any, owner: Any, address: int) -> "buffer":
        out = np.frombuffer(memory, dtype=np.uint8).view(cls)
        out._obj = owner
        out._address = int(address)
        return out

    def __array_finalize__(self, parent: Any) -> None:
        self._obj = getattr(parent, "_obj", None)
        self._address = getattr(parent, "_address", 0)

    def __setitem__(self, key: Any, value: Any) -> None:
        if isinstance(value, (bytes, bytearray, memoryview)):
            value = np.frombuffer(value, dtype=np.uint8)
        super().__setitem__(key, value)

    @property
    def address(self) -> int:
        """The address of the first byte."""
        if self.size:
            return int(self.__array_interface__["data"][0])
        return self._address

    @property
    def obj(self) -> Any:
        """The object whose memory this is (the window)."""
        return self._obj

    @property
    def readonly(self) -> bool:
        return not self.flags.writeable

    def cast(self, format: str, shape: Any = None) -> memoryview:  # noqa: A002 - mpi4py's name
        view = memoryview(self).cast("B")
        return view.cast(format) if shape is None else view.cast(format, shape)

    def toreadonly(self) -> "buffer":
        out = self.view()
        out.flags.writeable = False
        return out

    def release(self) -> None:
        """Nothing to release (the window owns the memory)."""


def Get_address(location: Any) -> int:
    """The absolute address of the first byte of a buffer (mpi4py's
    ``MPI.Get_address``): the target displacement of memory attached to a
    dynamic window."""
    if isinstance(location, buffer):
        return location.address  # numpy gives empty memory an address of its own; the window's is 0
    address = _core.buffer_address(location)
    if address is None:
        raise ArgumentTypeError(f"Get_address needs a buffer, got {type(location).__name__}")
    return int(address)
