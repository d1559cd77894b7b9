"""The C++ core's folders include downwards only (tools/check_layers.py), and
docs/design.md states that order and names every folder and file of cpp/.

Needs neither MPI nor the built package: the checker is run as a script and
imported by its path.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tools" / "check_layers.py"
DESIGN = ROOT / "docs" / "design.md"


def checker():
    spec = importlib.util.spec_from_file_location("check_layers", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(root)], capture_output=True, text=True, timeout=60
    )


def test_the_core_includes_no_higher_layer() -> None:
    done = run(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


def write(root: Path, name: str, text: str) -> None:
    path = root / "cpp" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_an_upward_include_fails(tmp_path: Path) -> None:
    write(tmp_path, "src/window/impl.hpp", '#include "paths/data_path.hpp"\n#include "onesided/window.hpp"\n')
    write(tmp_path, "src/paths/data_path.hpp", '#include "common/remote_region.hpp"\n')
    write(tmp_path, "src/common/remote_region.hpp", '#include <cstdint>\n')
    write(tmp_path, "include/onesided/window.hpp", '#include "onesided/types.hpp"\n')
    assert run(tmp_path).returncode == 0

    write(tmp_path, "src/common/remote_region.hpp", '#include <cstdint>\n#include "window/impl.hpp"\n')
    done = run(tmp_path)
    assert done.returncode == 1
    assert 'cpp/src/common/remote_region.hpp:2: includes "window/impl.hpp": window is above common' in done.stdout


def test_one_layer_folders_include_neither_each_other(tmp_path: Path) -> None:
    write(tmp_path, "src/atomics/op_set.cpp", '#include "order/ordering.hpp"\n')
    done = run(tmp_path)
    assert done.returncode == 1
    assert "order and atomics are one layer" in done.stdout


def test_a_folder_in_no_layer_fails(tmp_path: Path) -> None:
    write(tmp_path, "src/misc/thing.hpp", "#pragma once\n")
    done = run(tmp_path)
    assert done.returncode == 1
    assert "folder misc is in no layer" in done.stdout


def test_design_md_states_the_layer_order() -> None:
    assert checker().order_text() in DESIGN.read_text()


def test_design_md_names_every_folder_and_file_of_cpp() -> None:
    design = DESIGN.read_text()
    cpp = ROOT / "cpp"
    missing = []
    for path in sorted(cpp.rglob("*")):
        if path.is_dir():
            if path.name + "/" not in design:
                missing.append(str(path.relative_to(ROOT)) + "/")
        elif path.name not in design:
            missing.append(str(path.relative_to(ROOT)))
    assert not missing, "docs/design.md does not name: " + ", ".join(missing)
