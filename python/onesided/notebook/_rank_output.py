"""Whole lines out of one rank's output stream, and where its cells end.

A rank writes into a pipe in pieces of any size (a ``print`` may arrive in
two reads, a C library may write half a line); the kernel shows only whole
lines, so lines of different ranks never merge. The end-of-cell marker
(:func:`onesided.notebook._ranks_channel.cell_end`) ends the unfinished line too: a
cell that printed ``"no newline"`` with ``end=""`` still shows it as a line
when it ends.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._ranks_channel import CELL_END

LONGEST_LINE = 1 << 16
"""An unfinished line longer than this many bytes is shown as it is, so a
rank writing without newlines cannot grow the kernel's memory."""


@dataclass(frozen=True)
class Line:
    """One line a rank wrote, without its newline."""

    text: str


@dataclass(frozen=True)
class CellEnd:
    """The rank's marker for the end of cell number ``cell``."""

    cell: int


class LineAssembler:
    """Turns one stream's bytes into :class:`Line` and :class:`CellEnd` events."""

    def __init__(self) -> None:
        self._pending = bytearray()

    def feed(self, data: bytes) -> list[Line | CellEnd]:
        """Add bytes read from the stream; return the events they complete, in order."""
        self._pending += data
        events: list[Line | CellEnd] = []
        while True:
            marker = CELL_END.search(self._pending)
            if marker is None:
                break
            before = bytes(self._pending[: marker.start()])
            events += _lines(before, finish=True)
            events.append(CellEnd(int(marker.group(1))))
            del self._pending[: marker.end()]
        cut = self._pending.rfind(b"\n") + 1
        if cut == 0 and len(self._pending) > LONGEST_LINE:
            cut = len(self._pending)
            events += _lines(bytes(self._pending), finish=True)
        else:
            events += _lines(bytes(self._pending[:cut]), finish=False)
        del self._pending[:cut]
        return events

    def flush(self) -> list[Line]:
        """The unfinished line, if any (the rank is gone and will not finish it)."""
        lines = _lines(bytes(self._pending), finish=True)
        self._pending.clear()
        return lines


def _lines(data: bytes, finish: bool) -> list[Line]:
    """``data``'s lines; with ``finish`` an unterminated last line counts too."""
    if not data:
        return []
    parts = data.split(b"\n")
    last = parts.pop()  # after the final newline: empty, or unterminated text
    if finish and last:
        parts.append(last)
    return [Line(part.decode("utf-8", "replace")) for part in parts]
