"""What the docs claim in prose, checked against what the code does or what
the project holds (the runnable blocks are tests/test_docs.py's): one test
per claim that went stale once (issue 30)."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import onesided
from docs_snippets import ROOT
from onesided.bench._peer import shown_path
from onesided.run._spawn import finish

README = (ROOT / "README.md").read_text()
DOCS = {path.name: path.read_text() for path in sorted((ROOT / "docs").glob("*.md"))}


def sentences(text: str) -> list[str]:
    return [" ".join(s.split()) for s in re.split(r"(?<=[.:;])\s", text)]


def test_readme_copies_no_figure() -> None:
    """The README links the bench's tables instead of copying figures that
    go stale (docs/performance.md has them as the bench printed them)."""
    figures = re.findall(r"\d+(?:\.\d+)?\s*(?:us|ns|µs|GB/s|MB/s|Mops/s|ops/s)\b|\d+(?:\.\d+)?x\b", README)
    assert not figures, figures
    assert "docs/performance.md" in README


def test_atomicity_is_claimed_per_dtype() -> None:
    """Accumulate-style calls are atomic with one another per dtype (native
    and software paths are chosen per dtype): every place that says so
    names the dtype."""
    claims = [s for text in (README, *DOCS.values()) for s in sentences(text)
              if re.search(r"\batomic per element with every other", s)]
    assert len(claims) >= 3, claims
    unqualified = [s for s in claims if "same dtype" not in s]
    assert not unqualified, unqualified


def path_of(flavor: str, info: dict[str, str]) -> str:
    win = (onesided.Window.Create(bytearray(64), 8, info=info) if flavor == "create"
           else onesided.Window.Allocate(64, 8, info=info))
    try:
        return str(win.Get_info()["onesided_path"])
    finally:
        win.Free()


def test_info_atomics_takes_the_documented_words() -> None:
    """win.info["atomics"] is one of the words docs/atomics.md lists, and
    each word is what the per-dtype report adds up to."""
    said = re.search(r'`win\.info\["atomics"\]` says ((?:`\w+`(?:,\s*|\s+or\s+)?)+)', DOCS["atomics.md"])
    assert said, "docs/atomics.md no longer says what win.info['atomics'] holds"
    documented = set(re.findall(r"`(\w+)`", said[1]))
    seen = set()
    for flavor, info in (("allocate", {}), ("create", {"provider": "shm"}),
                         ("allocate", {"provider": "tcp;ofi_rxm"}), ("allocate", {"onesided_atomics": "software"})):
        win = (onesided.Window.Create(bytearray(64), 8, info=info) if flavor == "create"
               else onesided.Window.Allocate(64, 8, info=info))
        try:
            natives = {p.native for p in win.atomics.by_dtype().values()}
            word = win.info["atomics"]
            assert word == ("mixed" if len(natives) == 2 else "native" if True in natives else "software"), info
            seen.add(word)
        finally:
            win.Free()
    assert seen <= documented and len(seen) >= 2, (seen, documented)


def test_readme_names_every_data_path() -> None:
    """README's "What you can rely on" names each path a window can take on
    one host, as Get_info()["onesided_path"] names it."""
    paths = {path_of("allocate", {}), path_of("create", {"provider": "shm"}),
             path_of("allocate", {"onesided_shared_memory": "off"})}
    assert paths == {"shared-memory", "cross-memory", "provider"}, paths
    rely = README.split("## What you can rely on")[1].split("\n## ")[0]
    missing = [p for p in paths if f"`{p}`" not in rely]
    assert not missing, missing


def test_index_names_every_notebook() -> None:
    notebooks = [p.stem for p in sorted((ROOT / "notebooks").glob("*.ipynb"))]
    missing = [name for name in notebooks if f"`{name}`" not in DOCS["index.md"]]
    assert not missing, missing


def test_notebooks_speak_current_names() -> None:
    """The shared-memory path is no longer called the fast path; its info key
    `onesided_fast_path` is an alias kept for old code, not for examples."""
    stale = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for index, cell in enumerate(json.loads(path.read_text())["cells"]):
            source = "".join(cell["source"])
            if re.search(r"fast[ _]path", source):
                stale.append(f"{path.name} cell {index}")
    assert not stale, stale


def test_pytest_floor_is_the_same_everywhere() -> None:
    """docs/testing.md's minimum pytest is pyproject's (the plugin passes
    consider_namespace_packages to import_path, new in pytest 8.1)."""
    doc = re.search(r"needs pytest (\d+(?:\.\d+)*) or later", DOCS["testing.md"])
    project = re.search(r'"pytest>=(\d+(?:\.\d+)*)"', (ROOT / "pyproject.toml").read_text())
    assert doc and project and doc[1] == project[1], (doc and doc[1], project and project[1])
    assert tuple(int(x) for x in pytest.__version__.split(".")[:2]) >= tuple(int(x) for x in doc[1].split("."))


def test_output_dir_keeps_the_files_the_readme_names(tmp_path: Path) -> None:
    script = tmp_path / "hello.py"
    script.write_text("print('hello')\n")
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "onesided", "run", "-n", "2", "--timeout", "60", "--output-dir",
                             str(out), str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    _, err, expired = finish(proc, 90)
    assert not expired and proc.returncode == 0, err
    named = sorted({name.replace("R", str(r)) for name in re.findall(r"`DIR/(rank\.R\.\w+)`", README)
                    for r in range(2)})
    assert named == sorted(p.name for p in out.iterdir())


def test_design_names_only_what_exists() -> None:
    """Every `snake_case` code name design.md gives (functions, members) is
    in the sources, so a renamed one cannot stay named."""
    sources = "\n".join(p.read_text(errors="replace") for folder in ("cpp", "python")
                        for p in (ROOT / folder).rglob("*") if p.suffix in (".hpp", ".cpp", ".h", ".py"))
    names = set(re.findall(r"`([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?:\(\))?`", DOCS["design.md"]))
    assert len(names) > 10, names
    missing = sorted(name for name in names if not re.search(rf"\b{name}\b", sources))
    assert not missing, missing


def test_docs_print_no_machine_paths() -> None:
    """Tables in the docs show paths relative to the project or the
    environment, as the bench prints them, never a checkout's."""
    absolute = [(name, m) for name, text in [("README.md", README), *DOCS.items()]
                for m in re.findall(r"(?<![\w.])/(?:work|home|root|tmp)/[\w./-]+", text)]
    assert not absolute, absolute


def test_bench_shows_paths_relative_to_the_environment_or_project(tmp_path: Path) -> None:
    env, project = tmp_path / "checkout" / ".venv-mpich5", tmp_path / "checkout"
    assert shown_path(str(env / "lib/mpich/libfabric.so.1"), str(env), str(project)) == \
        ".venv-mpich5/lib/mpich/libfabric.so.1"
    assert shown_path(str(project / "build/lib/libfabric.so.1"), str(tmp_path / "elsewhere"), str(project)) == \
        "build/lib/libfabric.so.1"
    system = "/usr/lib/x86_64-linux-gnu/libfabric.so.1"
    assert shown_path(system, str(env), str(project)) == system


def test_calls_shown_inline_take_their_keywords() -> None:
    """Every `win.Name(..., key=value)` the docs show names keywords the
    Window method takes (semantics.md once showed Rfetch_and_op(...,
    disp=0), a TypeError: the parameter is target_disp)."""
    shown, wrong = 0, []
    for name, text in [("README.md", README), *DOCS.items()]:
        for call in re.finditer(r"`(?:win|onesided\.Window)\.(\w+)\(([^`]*)\)`", text):
            method = getattr(onesided.Window, call[1], None)
            if method is None:
                wrong.append(f"{name}: {call[0]}: no such method")
                continue
            try:
                params = inspect.signature(method).parameters
            except ValueError:  # a method of the compiled core: pybind11 gives no signature
                continue
            if any(p.kind == p.VAR_KEYWORD for p in params.values()):
                continue
            for keyword in re.findall(r"(?<![=\w])(\w+)=", call[2]):
                shown += 1
                if keyword not in params:
                    wrong.append(f"{name}: {call[0]}: no parameter {keyword}")
    assert shown > 20 and not wrong, wrong
