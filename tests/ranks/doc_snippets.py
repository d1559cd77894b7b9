"""Runs documentation blocks as a reader would, one after another in this
process (tests/test_docs.py batches a document's blocks into one job).

Usage: doc_snippets.py JOB_DIR. JOB_DIR holds ``job.json``, a list of
``{"source", "kind", "path"}`` (kind "script" or "doctest"; path a file
holding the block). Each block runs in a namespace of its own, as
``__main__`` from its file (so ``inspect.getsource`` finds what it defines).
Everything a block writes to fd 1 (this process's and its children's) goes
to ``JOB_DIR/<rank>.<index>.stdout``. A block that raises (or a doctest that
fails) writes ``JOB_DIR/<rank>.error`` naming the block and exits 1, so the
launcher stops the other ranks instead of leaving them in a collective.
"""

from __future__ import annotations

import doctest
import json
import os
import runpy
import sys
import traceback
from pathlib import Path


def this_rank() -> str:
    """From the launcher's variables, not from onesided.COMM_WORLD: reading
    that here would choose the world before the blocks do."""
    for name in ("ONESIDED_RANK", "PMI_RANK", "OMPI_COMM_WORLD_RANK"):
        if name in os.environ:
            return os.environ[name]
    return "0"


def run_doctest(path: Path, source: str) -> None:
    test = doctest.DocTestParser().get_doctest(path.read_text(), {"__name__": "__main__"}, source, str(path), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=sys.stderr.write)
    if runner.failures:
        raise AssertionError(f"{runner.failures} of the session's examples printed something else (above)")


def main(job: Path) -> int:
    rank = this_rank()
    for index, block in enumerate(json.loads((job / "job.json").read_text())):
        sys.stdout.flush()
        saved = os.dup(1)
        with open(job / f"{rank}.{index}.stdout", "wb") as out:
            os.dup2(out.fileno(), 1)
            try:
                if block["kind"] == "doctest":
                    run_doctest(Path(block["path"]), block["source"])
                else:
                    runpy.run_path(block["path"], run_name="__main__")
            except BaseException:
                failure = f"{block['source']} failed on rank {rank}:\n{traceback.format_exc()}"
                (job / f"{rank}.error").write_text(failure)
                sys.stderr.write(failure)
                return 1
            finally:
                sys.stdout.flush()
                os.dup2(saved, 1)
                os.close(saved)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
