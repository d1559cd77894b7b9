"""Every Python snippet in README.md runs, in a plain process (a world of
size 1) and on 4 ranks under the launcher."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_ranks

README = Path(__file__).resolve().parents[1] / "README.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_snippets() -> None:
    assert SNIPPETS


@pytest.mark.parametrize("index", range(len(SNIPPETS)))
def test_readme_snippet(index: int, tmp_path: Path) -> None:
    script = tmp_path / f"snippet{index}.py"
    script.write_text(SNIPPETS[index])
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert plain.returncode == 0, plain.stderr
    run_ranks(str(script), 4)
