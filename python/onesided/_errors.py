"""The exceptions onesided raises.

Every failure is a subclass of :class:`Error`; the message names the rule that
was broken. The C++ core raises categorised errors that the binding layer
translates, in one place, into these classes.
"""

from __future__ import annotations


class Error(Exception):
    """Base class of every onesided exception."""


class ArgumentError(Error, ValueError):
    """A malformed call: mismatched counts or dtypes, a read-only or
    non-contiguous buffer, an unknown info key, an op invalid for the call."""


class ArgumentTypeError(TypeError, ArgumentError):
    """An argument of the wrong type: a rank, displacement, count or size that
    is not an integer (``float``, ``str``, ``bool``), an op that is not an op
    object, something that is not a buffer where a buffer is needed. A
    ``TypeError`` first, as Python and mpi4py raise for these; an
    :class:`ArgumentError` too."""


class BufferArgumentError(BufferError, ArgumentError):
    """A buffer onesided cannot use as the call needs: read-only where
    onesided must write (a Get's or a fetching call's result, a Create
    window's memory, an Attach), or not contiguous. A ``BufferError`` first,
    as the buffer protocol and mpi4py raise; an :class:`ArgumentError` too."""


class BoundsError(Error, IndexError):
    """A target range that does not lie inside the target's window. Checked at
    the origin before anything is sent."""


class EpochError(Error, RuntimeError):
    """A call in the wrong synchronisation state: an operation outside any
    access epoch, Unlock without Lock, nested locks, Free while locked, a call
    on a freed window."""


class UnsupportedError(Error, TypeError):
    """An op or dtype with no meaning here (BAND on float64, float16)."""


class OpSetError(Error, ValueError):
    """An operation outside the set the window declared with ``accumulate_ops``."""


MACHINE_HINT = "(run `python -m onesided info` to see what onesided finds on this machine)"
"""Ends the message of every error that depends on the machine."""


class TransportError(Error, RuntimeError):
    """libfabric or the bootstrap reported a failure; the message names the
    call and carries ``fi_strerror``'s text. Such failures depend on the
    machine (providers, interfaces, reachability, ``/dev/shm``), so the
    message ends with :data:`MACHINE_HINT`, unless it reports a peer that
    died, which says all there is."""

    def __str__(self) -> str:
        # Here, not in the C++ translator: one place for messages from the
        # core and from Python alike, and args keep the core's own text.
        text = super().__str__()
        if "has died" in text or MACHINE_HINT in text:
            return text
        return f"{text} {MACHINE_HINT}"


class InternalError(Error, RuntimeError):
    """A broken invariant inside onesided: please report it."""


class RaceError(Error, RuntimeError):
    """The race checker (``onesided_check=races:error``) found two accesses
    that conflict with nothing ordering them; the message names both calls
    (rank, call, target bytes, dtype and op, epoch kind, source line).
    Raised by the synchronisation call that brought them together, or by
    the second of two conflicting calls of one rank (docs/checking.md)."""


class RaceWarning(UserWarning):
    """What the race checker (``onesided_check=races``) warns of: two
    accesses that conflict with nothing ordering them, named as in
    :class:`RaceError`; a summary per window follows at Free."""


__all__ = [
    "Error",
    "ArgumentError",
    "ArgumentTypeError",
    "BufferArgumentError",
    "BoundsError",
    "EpochError",
    "UnsupportedError",
    "OpSetError",
    "TransportError",
    "InternalError",
    "RaceError",
    "RaceWarning",
]
