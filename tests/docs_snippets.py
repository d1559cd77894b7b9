"""The code blocks of README.md, docs/*.md and the notebooks' markdown cells,
and how each is meant to run (tests/test_docs.py runs them).

A fenced block that a reader could run (```` ```python ````, ```` ```sh ````,
or any block holding a ``>>>`` session or a ``$`` shell prompt) carries a marker, an HTML comment on
the line just above its fence (invisible on GitHub and in the built docs):

``<!-- run: ranks=1,4 -->``
    a Python script, run as a reader would paste it (its own namespace, no
    state from other blocks) in a plain process (1: a world of one) and on
    each other count of ranks under ``python -m onesided run``;
    ``mpiexec=N`` adds a run on N ranks under MPICH's mpiexec.
``<!-- run: doctest -->``
    a ``>>>`` session, its shown results compared (ELLIPSIS allowed).
``<!-- run: pytest -->``
    a pytest file, run by pytest (the ranks plugin does the rest).
``<!-- run: notebook -->``
    IPython cells (magics allowed): the file's notebook blocks, in order,
    are the cells of one notebook run on a fresh kernel.
``<!-- run: sh -->``
    shell lines run from the project root, ``python`` and ``mpiexec`` being
    this environment's.
``<!-- norun: why -->``
    not meant to run here (it builds, installs, or needs a cluster); the
    reason is required.

A plain block marked ``<!-- run: output -->`` right after a run block shows
what that block prints: the first run of its ``ranks`` (rank 0's stdout)
must print that, ``...`` matching anything within and across lines.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

RUNNABLE_LANGUAGES = ("python", "sh", "bash", "console", "pycon")
KINDS = ("script", "doctest", "pytest", "notebook", "sh", "output")

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^`\n]*)$")
_MARKER = re.compile(r"^\s*<!--\s*(?P<verb>run|norun):\s*(?P<rest>.*?)\s*-->\s*$")


@dataclass
class Block:
    """One fenced block of a document."""

    source: str  # "docs/tutorial.md:36" or "notebooks/x.ipynb cell 3:5"
    document: str  # the file, relative to the project
    language: str
    code: str
    kind: str | None = None  # one of KINDS; None: no marker
    norun: str | None = None  # the reason given by a norun marker
    ranks: tuple[int, ...] = (1,)
    mpiexec: int | None = None
    expected: str | None = None  # the output block that follows, if any
    problems: list[str] = field(default_factory=list)

    @property
    def runnable_looking(self) -> bool:
        """Whether a reader could take this block for code to run."""
        return self.language in RUNNABLE_LANGUAGES or any(
            line.lstrip().startswith((">>> ", "$ ")) for line in self.code.splitlines())


def _parse_marker(block: Block, verb: str, rest: str) -> None:
    if verb == "norun":
        block.norun = rest
        if not rest:
            block.problems.append("norun marker without a reason")
        return
    words = rest.split()
    if not words:
        block.problems.append("empty run marker")
        return
    if words[0].startswith("ranks="):
        block.kind = "script"
    elif words[0] in KINDS and words[0] != "script":
        block.kind = words.pop(0)
    else:
        block.problems.append(f"unknown run marker {rest!r}")
        return
    for word in words:
        key, _, value = word.partition("=")
        try:
            if key == "ranks" and block.kind == "script":
                block.ranks = tuple(int(n) for n in value.split(","))
            elif key == "mpiexec" and block.kind == "script":
                block.mpiexec = int(value)
            else:
                raise ValueError
        except ValueError:
            block.problems.append(f"bad run marker word {word!r}")


def blocks_of_text(text: str, document: str, where: str = "") -> list[Block]:
    """The fenced blocks of markdown ``text``, their markers read, every output
    block attached to the run block before it (and not listed itself)."""
    lines = text.split("\n")
    found: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, indent = m["fence"], m["indent"]
        end = i + 1
        while end < len(lines) and lines[end].strip() != fence:
            end += 1
        code = "\n".join(line[len(indent):] if line.startswith(indent) else line for line in lines[i + 1:end])
        info = m["info"].strip()
        block = Block(source=f"{document}{where}:{i + 1}", document=document,
                      language=info.split()[0] if info else "", code=code + "\n")
        marker = _MARKER.match(lines[i - 1]) if i > 0 else None
        if marker:
            _parse_marker(block, marker["verb"], marker["rest"])
        if block.kind == "output":
            if found and found[-1].kind not in (None, "output") and found[-1].expected is None:
                found[-1].expected = block.code
            else:
                block.problems.append("output block not right after a run block")
                found.append(block)
        else:
            found.append(block)
        i = end + 1
    return found


def blocks_of(path: Path) -> list[Block]:
    """The blocks of a markdown file, or of a notebook's markdown cells."""
    document = str(path.relative_to(ROOT))
    if path.suffix != ".ipynb":
        return blocks_of_text(path.read_text(), document)
    cells = json.loads(path.read_text())["cells"]
    found: list[Block] = []
    for index, cell in enumerate(cells):
        if cell["cell_type"] == "markdown":
            source = cell["source"]
            found += blocks_of_text("".join(source) if isinstance(source, list) else source,
                                    document, f" cell {index}")
    return found


def documents() -> list[Path]:
    """Every document whose blocks are checked."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
            *sorted((ROOT / "notebooks").glob("*.ipynb"))]


def all_blocks() -> list[Block]:
    return [block for path in documents() for block in blocks_of(path)]
