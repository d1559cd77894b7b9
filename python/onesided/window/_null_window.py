"""The null window, ``Window()`` (mpi4py's ``MPI.WIN_NULL``)."""

from __future__ import annotations

from typing import Any

from .._errors import ArgumentError, EpochError
from ._constants import _mpi


class NullWindow:
    """The null window, ``Window()`` (mpi4py's ``MPI.WIN_NULL``): false in a
    boolean context, equal to every null window (and to ``MPI.WIN_NULL``),
    ``free()`` does nothing, and anything else raises :class:`EpochError`.
    ``isinstance(Window(), Window)`` is True."""

    __slots__ = ()

    # The class whose members a null window refuses by name: set to Window
    # by onesided.window._window, which imports this module (not the
    # reverse); until then a null window has no members.
    window_class: type = object

    def __bool__(self) -> bool:
        return False

    def __eq__(self, other: object) -> bool:
        if isinstance(other, NullWindow):
            return True
        mpi = _mpi()
        return mpi is not None and isinstance(other, mpi.Win) and other == mpi.WIN_NULL

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = object.__hash__

    def __reduce__(self) -> Any:
        raise ArgumentError("cannot serialize 'onesided.Window' instance")

    def free(self) -> None:
        """Nothing to free."""

    def Get_name(self) -> str:
        """``"MPI_WIN_NULL"``, as ``MPI.WIN_NULL.Get_name()``."""
        return "MPI_WIN_NULL"

    def __repr__(self) -> str:
        return "<onesided.Window null>"

    def __getattr__(self, name: str) -> Any:
        member = getattr(self.window_class, name, None) if not name.startswith("__") else None
        if member is None:
            raise AttributeError(name)
        message = f"{name}: the window is the null window (Window())"
        if isinstance(member, property):
            raise EpochError(message)

        def null_call(*args: Any, **kwargs: Any) -> Any:
            raise EpochError(message)

        return null_call



