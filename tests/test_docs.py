"""The documentation is true: it builds with warnings treated as errors
(broken links, missing API names, stale references all fail it), and every
block of README.md, docs/*.md and the notebooks' markdown that a reader could
run says how it runs and runs so, printing what the docs show
(tests/docs_snippets.py has the markers). A document's blocks of one kind of
run share one job, so the whole costs one process start per document and
rank count."""

from __future__ import annotations

import doctest
import json
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from conftest import RANKS, mpiexec, run_ranks
from docs_snippets import ROOT, Block, all_blocks
from onesided.run._spawn import finish

BLOCKS = all_blocks()

# (document, launcher, ranks) -> the blocks that run there, in document order.
Job = tuple[str, str, int]
JOBS: dict[Job, list[Block]] = defaultdict(list)
for _block in BLOCKS:
    if _block.kind == "doctest":
        JOBS[(_block.document, "plain", 1)].append(_block)
    elif _block.kind == "script":
        for _n in _block.ranks:
            JOBS[(_block.document, "plain" if _n == 1 else "onesided", _n)].append(_block)
        if _block.mpiexec:
            JOBS[(_block.document, "mpiexec", _block.mpiexec)].append(_block)

# Identical shell blocks (README.md and docs/ show some commands twice) run once.
SHELL: dict[str, list[str]] = defaultdict(list)
for _block in BLOCKS:
    if _block.kind == "sh":
        SHELL[_block.code].append(_block.source)

NOTEBOOKS: dict[str, list[Block]] = defaultdict(list)
for _block in BLOCKS:
    if _block.kind == "notebook":
        NOTEBOOKS[_block.document].append(_block)

PYTESTS = [block for block in BLOCKS if block.kind == "pytest"]

# What a plain process must not inherit: it would not be a world of one.
WORLD_VARIABLES = ("ONESIDED_COORD", "ONESIDED_RANK", "ONESIDED_SIZE", "ONESIDED_TOKEN",
                   "PMI_RANK", "PMI_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE")


def plain_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in WORLD_VARIABLES}


def test_docs_build_strictly(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "site" / "api" / "index.html").exists()
    shutil.rmtree(tmp_path / "site")


def test_every_runnable_block_says_how_it_runs() -> None:
    unmarked = [b.source for b in BLOCKS if b.runnable_looking and b.kind is None and b.norun is None]
    assert not unmarked, f"blocks a reader could run but with no <!-- run: ... --> or <!-- norun: why --> above: {unmarked}"
    problems = [f"{b.source}: {p}" for b in BLOCKS for p in b.problems]
    assert not problems, problems


def test_every_kind_of_run_is_used() -> None:
    """The jobs below are not empty because the markers went unread."""
    kinds = {b.kind for b in BLOCKS}
    assert kinds >= {"script", "doctest", "pytest", "notebook", "sh"}, kinds
    assert any(b.expected for b in BLOCKS)
    assert ("README.md", "onesided", 4) in JOBS and ("README.md", "mpiexec", 2) in JOBS


def block_file(directory: Path, index: int, block: Block) -> Path:
    name = block.source.replace("/", "_").replace(":", "_L").replace(" ", "_").replace(".", "_")
    path = directory / f"b{index}_{name}.py"
    path.write_text(block.code)
    return path


def first_run(block: Block) -> Job:
    if block.kind == "doctest" or block.ranks[0] == 1:
        return (block.document, "plain", 1)
    return (block.document, "onesided", block.ranks[0])


def prints_as_shown(block: Block, got: str) -> bool:
    """The docs' output block matches what ran, ``...`` matching anything."""
    assert block.expected is not None
    checker = doctest.OutputChecker()
    return checker.check_output(block.expected, got, doctest.ELLIPSIS)


@pytest.mark.parametrize("job", sorted(JOBS), ids=lambda job: f"{job[0]}-{job[1]}-{job[2]}")
def test_doc_blocks_run(job: Job, tmp_path: Path) -> None:
    document, launcher, n = job
    blocks = JOBS[job]
    spec = [{"source": b.source, "kind": b.kind, "path": str(block_file(tmp_path, i, b))} for i, b in enumerate(blocks)]
    (tmp_path / "job.json").write_text(json.dumps(spec))
    if launcher == "plain":
        proc = subprocess.Popen([sys.executable, str(RANKS / "doc_snippets.py"), str(tmp_path)], cwd=tmp_path,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=plain_env(),
                                start_new_session=True)
        out, err, expired = finish(proc, 180)
        assert not expired, f"{document}'s blocks timed out\nstdout:\n{out}\nstderr:\n{err}"
        returncode = proc.returncode
    else:
        done = run_ranks("doc_snippets.py", n, str(tmp_path), launcher=launcher, timeout=180, check=False)
        out, err, returncode = done.stdout, done.stderr, done.returncode
    errors = "\n".join(p.read_text() for p in sorted(tmp_path.glob("*.error")))
    assert returncode == 0 and not errors, f"{errors or 'exit status ' + str(returncode)}\nstderr:\n{err}"
    ranks = [str(r) for r in range(n)]
    for i, block in enumerate(blocks):
        missing = [r for r in ranks if not (tmp_path / f"{r}.{i}.stdout").exists()]
        assert not missing, f"{block.source} did not run on ranks {missing}"
        if block.expected is not None and first_run(block) == job:
            got = (tmp_path / f"0.{i}.stdout").read_text()
            assert prints_as_shown(block, got), f"{block.source} printed\n{got}\nthe docs show\n{block.expected}"


@pytest.mark.parametrize("code", sorted(SHELL), ids=lambda code: SHELL[code][0])
def test_doc_shell_blocks_run(code: str, tmp_path: Path) -> None:
    # `python` and `mpiexec` in the docs are this environment's.
    (tmp_path / "bin").mkdir()
    # Scripts, not links: a link would leave the virtualenv (found beside the
    # path run) and Hydra's proxy (found beside mpiexec).
    for name, target in (("python", sys.executable), ("mpiexec", mpiexec())):
        (tmp_path / "bin" / name).write_text(f'#!/bin/sh\nexec "{target}" "$@"\n')
        (tmp_path / "bin" / name).chmod(0o755)
    env = plain_env()
    env["PATH"] = os.pathsep.join([str(tmp_path / "bin"), env["PATH"]])
    proc = subprocess.Popen(["bash", "-e", "-c", code], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, start_new_session=True)
    out, err, expired = finish(proc, 240)
    assert not expired and proc.returncode == 0, f"{SHELL[code]}: {code}\nstdout:\n{out}\nstderr:\n{err}"


@pytest.mark.parametrize("block", PYTESTS, ids=lambda block: block.source)
def test_doc_pytest_blocks_pass(block: Block, tmp_path: Path) -> None:
    (tmp_path / "test_from_docs.py").write_text(block.code)
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_from_docs.py"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=plain_env(), start_new_session=True)
    out, _, expired = finish(proc, 240)
    assert not expired and proc.returncode == 0, f"{block.source}:\n{out}"
    assert " passed" in out and "failed" not in out, out


@pytest.mark.parametrize("document", sorted(NOTEBOOKS))
def test_doc_notebook_blocks_run(document: str, tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(b.code.rstrip("\n")) for b in NOTEBOOKS[document]])
    # A cell that raises makes execute() raise CellExecutionError with its traceback.
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
