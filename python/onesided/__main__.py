"""Command line: ``python -m onesided COMMAND ...``.

Commands:

``run -n N [--timeout SECONDS] [--tag-output] [--output-dir DIR] [--hosts H[:S],... | --hostfile F] [--rsh CMD] [--coordinator ADDR] script.py [args ...]``
``run -n N [...] -m module [args ...]``
    Start N ranks of a Python program, on this machine or across hosts,
    and exit with the job's status (see :mod:`onesided.run._launch`). Each
    rank's output is relayed as whole lines, stdout to stdout and stderr to
    stderr; ``--tag-output`` (``-l``) starts every line with ``[R] ``, R
    the rank; ``--output-dir DIR`` writes ``DIR/rank.R.stdout`` and
    ``DIR/rank.R.stderr`` instead.

``info [--json]``
    Show what onesided finds on this machine: versions, libfabric's
    providers and their atomics, the shared-memory verdict, ``/dev/shm``,
    interfaces and the environment variables that change its choices (see
    :mod:`onesided._info`). Attach it to bug reports.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import _info
from .run import _launch


def build_parser() -> argparse.ArgumentParser:
    """Return the parser; each command sets ``handler(args) -> exit status``."""
    parser = argparse.ArgumentParser(prog="python -m onesided", description="onesided command-line tools")
    commands = parser.add_subparsers(title="commands", dest="command", required=True, metavar="COMMAND")
    run = commands.add_parser(
        "run",
        help="launch N ranks of a Python program",
        description="Launch N ranks of a Python script or module and exit with the job's status.",
    )
    _launch.add_arguments(run)
    run.set_defaults(handler=_launch.main)
    info = commands.add_parser(
        "info",
        help="show what onesided finds on this machine (attach it to bug reports)",
        description="Versions, libfabric's providers and their atomics, the shared-memory verdict, /dev/shm, "
        "network interfaces and the environment variables that change onesided's choices.",
    )
    _info.add_arguments(info)
    info.set_defaults(handler=_info.main)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default: ``sys.argv[1:]``), run the command, return its status."""
    args = build_parser().parse_args(argv)
    status: int = args.handler(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
