"""The op x dtype x provider table of docs/atomics.md, from a live probe.

    python -m onesided.atomics_table            # print the generated section
    python -m onesided.atomics_table --write docs/atomics.md

The section lies between the markers below in docs/atomics.md; tests check
that it matches what the probe finds on the machine that runs them. Every
row and column comes from the core's op x dtype table, and every cell from
the provider's fi_fetch_atomicvalid / fi_compare_atomicvalid answers as a
window sees them.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from . import _core
from .window._window import Window

BEGIN = "<!-- probe:begin -->"
END = "<!-- probe:end -->"
PROVIDERS = ("shm", "tcp;ofi_rxm")


def generate(providers: tuple[str, ...] = PROVIDERS) -> str:
    dtypes = [name for name, _ in _core.dtypes()]
    ops = [name for name, _ in _core.ops()]
    lines = [BEGIN, ""]
    decisions: dict[str, list[str]] = {d: [] for d in dtypes}
    for provider in providers:
        # The probe does not depend on the declarations; the default window
        # shows what a program that declares nothing gets. The provider
        # path: on one host, Allocate windows would take the shared-memory
        # path instead (docs/atomics.md says when).
        win = Window.Allocate(8, info={"provider": provider, "onesided_shared_memory": "off"})
        lines += [f"### {provider}", "", "| call:op | " + " | ".join(dtypes) + " |",
                  "|---|" + "---|" * len(dtypes)]
        for f, (fname, admitted) in enumerate(_core.functions()):
            for op in admitted:
                cells = []
                for d in range(len(dtypes)):
                    if not _core.op_applies(op, d):
                        cells.append(" ")
                    else:
                        cells.append("N" if win._native_count(f, op, d) else "s")
                lines.append(f"| {fname}:{ops[op]} | " + " | ".join(cells) + " |")
        lines.append("")
        for d, name in enumerate(dtypes):
            path = "native" if win._native_atomics(d) else "software"
            decisions[name].append(f"{path}: {win._atomics_reason(d)}")
        win.Free()
    lines += ["### Default decision per dtype (no accumulate_ops, strict accumulate_ordering)", "",
              "| dtype | " + " | ".join(providers) + " |", "|---|" + "---|" * len(providers)]
    for name in dtypes:
        lines.append(f"| {name} | " + " | ".join(decisions[name]) + " |")
    lines += ["", END]
    return "\n".join(lines)


def section(text: str) -> str:
    """The generated section of a document (markers included)."""
    m = re.search(re.escape(BEGIN) + ".*?" + re.escape(END), text, flags=re.S)
    if not m:
        raise ValueError("no probe section in the document")
    return m.group(0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m onesided.atomics_table")
    parser.add_argument("--write", type=Path, help="replace the section in this file")
    args = parser.parse_args(argv)
    table = generate()
    if args.write:
        text = args.write.read_text()
        args.write.write_text(text.replace(section(text), table))
    else:
        print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
