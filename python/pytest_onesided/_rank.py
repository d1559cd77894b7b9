"""What every rank runs for a test marked ``@pytest.mark.ranks(N)``.

The parent pytest process hands :func:`run_test` a :class:`RankCall` through
:func:`onesided.launch`. Each rank then imports the test module the way
pytest imported it in the parent (the parent's ``sys.path``, import mode and
rootdir, and pytest's assertion rewriting of test files), finds the test by
the attribute path pytest collected it under, and calls it with the
arguments the parent resolved.

A rank whose test raises writes a :class:`RankReport` (pytest's own
rendering of the traceback, cut to the test function as pytest cuts it) into
the call's report directory and re-raises: its non-zero exit is what makes
the launcher stop the other ranks at once.
"""

from __future__ import annotations

import ast
import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import os
import pickle
import sys
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from io import StringIO
from pathlib import Path, PurePath
from typing import Any

import pytest
from _pytest._io import TerminalWriter
from _pytest.assertion.rewrite import rewrite_asserts
from _pytest.pathlib import fnmatch_ex, import_path


@dataclass(frozen=True)
class RankCall:
    """Everything a rank needs to run one test as the parent would have."""

    path: str
    """The test module's file."""
    attributes: tuple[str, ...]
    """Where pytest found the test: the names of its classes in the module,
    outermost first, then the function's own name."""
    kwargs: dict[str, Any]
    """The test function's arguments, as resolved by the parent."""
    sys_path: tuple[str, ...]
    """The parent's ``sys.path`` when it ran the test (pytest has inserted
    the test's rootdir-relative base directory by then, per import mode)."""
    import_mode: str
    rootpath: str
    consider_namespace_packages: bool
    rewrite_patterns: tuple[str, ...] | None
    """pytest's ``python_files`` patterns, or None where the parent does not
    rewrite asserts (``--assert=plain``)."""
    tbstyle: str
    showlocals: bool
    report_dir: str


@dataclass(frozen=True)
class RankReport:
    """How a rank's test ended, if not by passing."""

    outcome: str
    """``failed``, ``skipped`` (``pytest.skip``) or ``xfailed`` (``pytest.xfail``)."""
    summary: str
    """One line: the exception (``KeyError: 'x'``), or the skip or xfail reason."""
    text: str
    """The traceback as pytest renders it (empty for a skip or xfail)."""


def run_test(call: RankCall) -> None:
    """Import and run the test on this rank; on failure leave a report and re-raise."""
    import onesided

    rank = onesided.COMM_WORLD.Get_rank()
    function: Callable[..., Any] | None = None
    try:
        function = _find_test(call)
        function(**call.kwargs)
    except BaseException as exc:
        _write_report(Path(call.report_dir), rank, _report(exc, function, call))
        raise


def _find_test(call: RankCall) -> Callable[..., Any]:
    sys.path[:] = call.sys_path
    if call.rewrite_patterns is not None:
        sys.meta_path.insert(0, _AssertionRewriter(call.rewrite_patterns, Path(call.path)))
    module = import_path(
        call.path,
        mode=call.import_mode,
        root=Path(call.rootpath),
        consider_namespace_packages=call.consider_namespace_packages,
    )
    owner: Any = module
    *classes, name = call.attributes
    for class_name in classes:
        owner = getattr(owner, class_name)
    if classes:
        owner = owner()  # a fresh instance per test, as pytest makes
    return getattr(owner, name)


class _AssertionRewriter(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports the modules pytest rewrites (files matching ``python_files``,
    and the test file itself) with their asserts rewritten by pytest's own
    rewriter, so that a failed assert shows its operands' values.

    pytest's import hook is not used because it needs a configured pytest
    session; pytest's detailed comparisons of long strings and containers,
    which need one too, are therefore not shown."""

    def __init__(self, patterns: Sequence[str], test_file: Path) -> None:
        self._patterns = tuple(patterns)
        self._test_file = test_file
        # Patterns naming directories can only be matched against a path.
        self._by_name_only = not any(os.sep in pattern for pattern in self._patterns)

    def _wanted(self, path: PurePath) -> bool:
        return path == self._test_file or any(fnmatch_ex(pattern, path) for pattern in self._patterns)

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        last = name.rpartition(".")[2]
        if self._by_name_only and last != self._test_file.stem and not self._wanted(PurePath(last + ".py")):
            return None  # cheap refusal before searching sys.path, as pytest's hook does
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if (
            spec is None
            or spec.origin is None
            or not isinstance(spec.loader, importlib.machinery.SourceFileLoader)
            or not self._wanted(Path(spec.origin))
        ):
            return None
        return importlib.util.spec_from_file_location(
            name, spec.origin, loader=self, submodule_search_locations=spec.submodule_search_locations
        )

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        assert module.__spec__ is not None and module.__spec__.origin is not None
        origin = module.__spec__.origin
        source = Path(origin).read_bytes()
        tree = ast.parse(source, filename=origin)
        rewrite_asserts(tree, source, origin)
        exec(compile(tree, origin, "exec", dont_inherit=True), module.__dict__)


def _report(exc: BaseException, function: Callable[..., Any] | None, call: RankCall) -> RankReport:
    """Render ``exc`` as pytest renders a test's failure (``--tb`` style,
    ``--showlocals``, the traceback starting at the test function)."""
    if isinstance(exc, pytest.skip.Exception):
        return RankReport("skipped", exc.msg or "", "")
    if isinstance(exc, pytest.xfail.Exception):  # before fail: XFailed is a Failed
        return RankReport("xfailed", exc.msg or "", "")
    if isinstance(exc, pytest.fail.Exception) and not exc.pytrace:
        return RankReport("failed", exc.msg or "", "")  # pytest.fail(..., pytrace=False): the message alone
    excinfo = pytest.ExceptionInfo.from_exception(exc)
    summary = excinfo.exconly(tryshort=True).partition("\n")[0]
    style = "long" if call.tbstyle == "auto" else call.tbstyle
    traceback = excinfo.traceback
    if function is not None:
        code = inspect.unwrap(getattr(function, "__func__", function)).__code__
        # Traceback entries count lines from 0.
        cut = traceback.cut(path=code.co_filename, firstlineno=code.co_firstlineno - 1)
        if cut != traceback:
            traceback = cut
    excinfo.traceback = traceback.filter(excinfo)
    rendered = excinfo.getrepr(funcargs=True, showlocals=call.showlocals, style=style, tbfilter=False)  # type: ignore[arg-type]
    # Not str(rendered): it strips the first line's indentation.
    text = StringIO()
    rendered.toterminal(TerminalWriter(file=text))
    return RankReport("failed", summary, text.getvalue().strip("\n"))


def _write_report(directory: Path, rank: int, report: RankReport) -> None:
    """Write atomically: a rank stopped while writing leaves no half report."""
    partial = directory / f".rank{rank}"
    partial.write_bytes(pickle.dumps(report))
    partial.rename(directory / f"rank{rank}")
