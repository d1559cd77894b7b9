#!/usr/bin/env python3
"""Fails when a file of the C++ core includes a layer above its own.

The folders of cpp/src, and the public headers in cpp/include/onesided,
are layers, lowest first in LAYERS below. A file may include its own folder
and any lower layer; include arrows run downwards only, so no two folders
include each other. Folders on one line of LAYERS are one layer: they
include neither each other nor anything above. docs/design.md states the
same order (tests/test_layers.py checks that it does).

Only quoted includes are read (`#include "folder/file.hpp"`); an include
without a folder is the including file's own folder. A folder of cpp/src
that LAYERS does not name fails too, so a new folder is placed on purpose.

Usage: tools/check_layers.py [--root DIR] [--order]
  --root DIR  the checkout to check (default: the one this script is in)
  --order     print the layer order, lowest first, and exit
Exit status: 0 when every include points to its own folder or lower, 1 otherwise.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

LAYERS: tuple[tuple[str, ...], ...] = (
    ("include/onesided",),  # the public API: its own types only
    ("common",),  # plain values and text helpers several layers share; the interrupt hook
    ("memory",),
    ("transport",),
    ("atomics", "layout", "locks", "order", "peers"),
    ("state",),  # WindowState: what the paths, the window locks and the window read
    ("races",),  # the race checker's log, which the checking path feeds and the window's synchronisation tells
    ("paths",),
    ("window",),
)

PUBLIC = "include/onesided"
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def order_text(layers: tuple[tuple[str, ...], ...] = LAYERS) -> str:
    """The layer order on one line, lowest first: `a < b, c < d`."""
    return " < ".join(", ".join(layer) for layer in layers)


def rank_of(layers: tuple[tuple[str, ...], ...] = LAYERS) -> dict[str, int]:
    return {folder: i for i, layer in enumerate(layers) for folder in layer}


def layered_files(root: Path) -> list[tuple[str, Path]]:
    """Every C++ file the layers cover, with the folder (layer name) it is in."""
    files = []
    src = root / "cpp" / "src"
    for path in sorted(src.rglob("*")):
        if path.is_file() and path.suffix in (".hpp", ".cpp", ".h", ".cc"):
            files.append((path.relative_to(src).parts[0], path))
    for path in sorted((root / "cpp" / PUBLIC).rglob("*")):
        if path.is_file():
            files.append((PUBLIC, path))
    return files


def folder_of_include(name: str, own: str) -> str:
    if "/" not in name:
        return own
    first = name.split("/", 1)[0]
    return PUBLIC if first == "onesided" else first


def violations(root: Path, layers: tuple[tuple[str, ...], ...] = LAYERS) -> list[str]:
    rank = rank_of(layers)
    found = []
    for own, path in layered_files(root):
        where = path.relative_to(root)
        if own not in rank:
            found.append(f"{where}: folder {own} is in no layer (add it to LAYERS in tools/check_layers.py)")
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            target = folder_of_include(match.group(1), own)
            if target == own:
                continue
            if target not in rank:
                found.append(f'{where}:{number}: includes "{match.group(1)}": {target} is in no layer')
            elif rank[target] == rank[own]:
                found.append(f'{where}:{number}: includes "{match.group(1)}": {target} and {own} are one layer')
            elif rank[target] > rank[own]:
                found.append(f'{where}:{number}: includes "{match.group(1)}": {target} is above {own}')
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--order", action="store_true")
    args = parser.parse_args(argv)
    if args.order:
        print(order_text())
        return 0
    found = violations(args.root)
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} include(s) against the layer order {order_text()}", file=sys.stderr)
        return 1
    print(f"layers hold: {order_text()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
