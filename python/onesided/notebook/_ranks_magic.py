"""The ``%%ranks`` magic: ``%load_ext onesided``, then cells that run on ranks
that stay alive between cells (a thin layer over :class:`onesided.Ranks`).

``%%ranks -n N``
    Start N ranks if none are running (error if a different number is),
    then run the cell on every rank.
``%%ranks``
    Run the cell on the running ranks.
``%%ranks --gather NAME`` (repeatable)
    After the cell, bind NAME in the kernel to the list of its values, one
    per rank. ``%ranks --gather NAME`` does it without a cell (IPython
    refuses a cell magic with an empty cell).
``%ranks stop``
    Stop the ranks (kernel shutdown does too).

A cell whose last line is an expression shows each rank's value as
``[rank] Out: value``. Only this module imports IPython; ``import onesided``
does not.
"""

from __future__ import annotations

import argparse
import shlex

from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.core.magic import Magics, line_cell_magic, magics_class

from ._ranks import Ranks


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"%%ranks: {message}")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="%%ranks", add_help=False)
    parser.add_argument("-n", type=int, metavar="N", help="number of ranks to start if none are running")
    parser.add_argument("--gather", action="append", default=[], metavar="NAME",
                        help="bring NAME back from every rank as a list")
    return parser


@magics_class
class RanksMagics(Magics):
    """``%%ranks`` and ``%ranks stop``; holds the kernel's one set of ranks."""

    def __init__(self, shell: InteractiveShell) -> None:
        super().__init__(shell)
        self.ranks: Ranks | None = None

    @line_cell_magic
    def ranks(self, line: str, cell: str | None = None) -> None:
        """Run a cell on every rank (``%%ranks [-n N] [--gather NAME]``);
        ``%ranks --gather NAME`` without a cell; ``%ranks stop`` to end them."""
        __tracebackhide__ = True  # noqa: F841  (IPython hides this frame)
        words = shlex.split(line)
        if cell is None and words == ["stop"]:
            if self.ranks is not None:
                self.ranks.stop()
                self.ranks = None
            return
        args = _parser().parse_args(words)
        if cell is None and args.n is None and not args.gather:
            print(self.ranks if self.ranks is not None and self.ranks.running else "no ranks are running")
            return
        ranks = self._ranks_for(args.n)
        if cell is not None and cell.strip():
            for result in ranks.run(cell):
                if result.value is not None:
                    print(f"[{result.rank}] Out: {result.value!r}")
        for name in args.gather:
            self.shell.user_ns[name] = ranks.gather(name)

    def _ranks_for(self, n: int | None) -> Ranks:
        """The running ranks, started with ``n`` if there are none."""
        if self.ranks is not None and self.ranks.running:
            if n is not None and n != self.ranks.size:
                raise UsageError(f"{self.ranks.size} ranks are running, not {n}: %ranks stop first")
            return self.ranks
        if n is None:
            raise UsageError("no ranks are running: start them with %%ranks -n N")
        if n < 1:
            raise UsageError(f"%%ranks: -n must be at least 1, got {n}")
        self.ranks = Ranks(n)
        return self.ranks


def load_ipython_extension(ipython: InteractiveShell) -> None:
    """Register ``%%ranks`` with ``ipython`` (``%load_ext onesided``)."""
    ipython.register_magics(RanksMagics)
