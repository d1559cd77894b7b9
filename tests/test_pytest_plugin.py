"""The pytest plugin (python/pytest_onesided, docs/testing.md): a test marked
``@pytest.mark.ranks(N)`` runs on N ranks when a user simply runs pytest.

Every test writes a small user test file and runs pytest on it in a
subprocess (pytester), as a user would, with the plugin given by ``-p`` (the
entry point exists only once onesided is installed). Each inner job has its
own ``timeout=`` and the subprocess a deadline of its own.
"""

from __future__ import annotations

import os
import re
import time
import tomllib
from pathlib import Path

import pytest
from conftest import alive

pytest_plugins = ["pytester"]

PLUGIN = ("-p", "pytest_onesided", "-p", "no:cacheprovider")
DEADLINE = 150.0
"""The inner pytest's own limit; every inner job's timeout is well below it."""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(*PLUGIN, *args, timeout=DEADLINE)


def shm_entries_of(pids: list[int]) -> list[str]:
    """/dev/shm entries named after these processes (libfabric's shm and onesided's own)."""
    return [n for n in os.listdir("/dev/shm") for p in pids if n.startswith((f"{p}:", f"onesided-bell-{p}", f"onesided-{p}-"))]


def test_three_ranks_take_unique_tickets_from_a_window_and_the_parent_runs_no_body(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_tickets="""
        import os
        import numpy as np
        import pytest
        import onesided

        with open("imports.log", "a") as log:  # run by every process that imports this module
            log.write(f"{os.getpid()} {os.environ.get('ONESIDED_RANK', 'parent')}\\n")

        @pytest.mark.ranks(3, timeout=60)
        def test_tickets(tmp_path):
            comm = onesided.COMM_WORLD
            win = onesided.Window.Allocate(8 if comm.rank == 0 else 0, 8)
            one, ticket, mine = np.ones(1, np.int64), np.zeros(1, np.int64), []
            with win.lock(0):
                for _ in range(20):
                    win.Fetch_and_op(one, ticket, 0, 0, onesided.SUM)
                    win.Flush(0)
                    mine.append(int(ticket[0]))
            everyone = sorted(t for part in comm.allgather(mine) for t in part)
            assert everyone == list(range(60))
            (tmp_path / f"rank{comm.rank}").write_text(str(os.getpid()))
            comm.Barrier()
            assert sorted(p.name for p in tmp_path.iterdir()) == ["rank0", "rank1", "rank2"]  # one shared directory
            with open("bodies.log", "a") as log:
                log.write(f"{os.getpid()} {comm.rank} {comm.size}\\n")
            win.Free()
        """
    )
    result = run(pytester)
    result.assert_outcomes(passed=1)
    imports = [line.split() for line in (pytester.path / "imports.log").read_text().splitlines()]
    bodies = [line.split() for line in (pytester.path / "bodies.log").read_text().splitlines()]
    parent = [pid for pid, rank in imports if rank == "parent"]
    assert len(parent) == 1, imports
    assert sorted((rank, size) for _, rank, size in bodies) == [("0", "3"), ("1", "3"), ("2", "3")], bodies
    assert len({pid for pid, _, _ in bodies} | set(parent)) == 4, (bodies, parent)  # four processes


def test_a_failing_rank_fails_the_test_with_its_number_and_traceback(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_fails="""
        import pytest
        import onesided

        def expected(rank):
            return 7 if rank == 2 else rank * 10

        @pytest.mark.ranks(3, timeout=60)
        def test_rank_two_disagrees():
            comm = onesided.COMM_WORLD
            value = comm.rank * 10
            assert value == expected(comm.rank)
            comm.Barrier()  # the others wait here until the launcher stops them
        """
    )
    start = time.monotonic()
    result = run(pytester)
    elapsed = time.monotonic() - start
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "rank 2 of 3 failed" in out, out
    # pytest's rendering of rank 2's traceback, with the rewritten assert's values
    result.stdout.fnmatch_lines(
        ["*rank 2 of 3 failed*", ">*assert value == expected(comm.rank)", "E*assert 20 == 7", "E*where 7 = expected(2)*"]
    )
    assert "Timeout" not in out and elapsed < 50, (elapsed, out)  # the others were stopped, not timed out


def test_a_hang_fails_at_the_timeout_and_leaves_no_process_or_shared_memory(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_hangs="""
        import os
        import threading
        import pytest
        import onesided

        @pytest.mark.ranks(2, timeout=4)
        def test_hangs():
            win = onesided.Window.Allocate(8, 8)  # shared memory the killed ranks leave behind
            with open(f"pids{onesided.COMM_WORLD.rank}", "w") as f:
                f.write(f"{os.getpid()} {os.getppid()}")  # the rank and its launcher
            threading.Event().wait()
        """
    )
    start = time.monotonic()
    result = run(pytester)
    elapsed = time.monotonic() - start
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*Timeout: the 2 ranks did not finish within 4 s; all were stopped*"])
    assert elapsed < 60, elapsed
    pids = sorted({int(p) for r in (0, 1) for p in (pytester.path / f"pids{r}").read_text().split()})
    assert len(pids) == 3, pids  # two ranks, one launcher
    assert [p for p in pids if alive(p)] == []
    assert shm_entries_of(pids) == []


def test_parametrized_tests_get_their_parameters_and_k_selects_among_them(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_params="""
        import pytest
        import onesided

        @pytest.mark.ranks(2, timeout=60)
        @pytest.mark.parametrize("base, expected", [(1, [1, 2]), (10, [10, 11]), (5, [0, 0])], ids=["one", "ten", "wrong"])
        def test_allgather(base, expected):
            comm = onesided.COMM_WORLD
            assert comm.allgather(base + comm.rank) == expected
        """
    )
    result = run(pytester, "-v")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*test_allgather?one? PASSED*", "*test_allgather?ten? PASSED*", "*test_allgather?wrong? FAILED*"])
    assert re.search(r"rank [01] of 2 failed", result.stdout.str())
    result = run(pytester, "-v", "-k", "ten")
    result.assert_outcomes(passed=1, deselected=2)


def test_xfail_skip_and_x_behave_as_for_any_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_outcomes="""
        import pytest
        import onesided

        @pytest.mark.xfail(reason="rank 1 is wrong", strict=True)
        @pytest.mark.ranks(2, timeout=60)
        def test_a_expected_failure():
            assert onesided.COMM_WORLD.rank == 0

        @pytest.mark.ranks(2, timeout=60)
        def test_b_skips_on_every_rank():
            pytest.skip("not on this machine")

        @pytest.mark.ranks(2, timeout=60)
        def test_c_fails():
            assert False

        @pytest.mark.ranks(2, timeout=60)
        def test_d_never_runs_under_x():
            pass
        """
    )
    result = run(pytester, "-x", "-rs")
    result.assert_outcomes(xfailed=1, skipped=1, failed=1)
    result.stdout.fnmatch_lines(["*rank ?: not on this machine*"])


def test_the_marker_misused_is_an_error_before_any_rank_starts(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_not_a_test="""
        import pytest

        @pytest.mark.ranks(2)
        def helper():
            pass
        """,
        test_bad_use="""
        import pytest

        @pytest.mark.ranks(0)
        def test_no_ranks():
            open("ran", "w").close()

        @pytest.mark.ranks("2")
        def test_n_is_text():
            open("ran", "w").close()

        @pytest.mark.ranks(2, tiemout=5)
        def test_misspelt_timeout():
            open("ran", "w").close()

        @pytest.mark.ranks(2)
        def test_wants_a_fixture(monkeypatch):
            open("ran", "w").close()

        @pytest.mark.ranks(2)
        @pytest.mark.parametrize("lock", [__import__("threading").Lock()])
        def test_parameter_does_not_pickle(lock):
            open("ran", "w").close()
        """,
    )
    result = run(pytester, "--continue-on-collection-errors")
    result.assert_outcomes(errors=6)  # at collection or set-up: no test body ran
    result.stdout.fnmatch_lines_random(
        [
            "@pytest.mark.ranks on helper in test_not_a_test.py: pytest does not collect it as a test*",
            "*RanksMarkerError: @pytest.mark.ranks on test_bad_use.py::test_no_ranks: n must be at least 1, got 0",
            "*RanksMarkerTypeError: @pytest.mark.ranks on test_bad_use.py::test_n_is_text: n must be an int, got str '2'",
            "*RanksMarkerError: @pytest.mark.ranks on *test_misspelt_timeout: unknown keyword argument 'tiemout'*",
            "*RanksMarkerError: @pytest.mark.ranks on *test_wants_a_fixture: argument 'monkeypatch' is a fixture*",
            "*RanksMarkerError: @pytest.mark.ranks on *test_parameter_does_not_pickle*: argument 'lock' cannot be sent to the ranks (TypeError: cannot pickle*",
        ]
    )
    assert not (pytester.path / "ran").exists()


def test_loaded_twice_it_runs_once_and_unmarked_tests_never_import_onesided(pytester: pytest.Pytester) -> None:
    """An installed onesided registers the plugin by entry point; with ``-p``
    too, pytest must load it once (a second registration under another name
    would stop pytest). A distribution's metadata on sys.path stands in for
    the installed package's."""
    dist = pytester.mkdir("onesided_entry_point-0.dist-info")
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: onesided-entry-point\nVersion: 0\n")
    pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    entries = pyproject["project"]["entry-points"]["pytest11"]
    (dist / "entry_points.txt").write_text("[pytest11]\n" + "".join(f"{k} = {v}\n" for k, v in entries.items()))
    pytester.makepyfile(
        test_plain="""
        import sys

        def test_onesided_is_not_imported():
            assert "onesided" not in sys.modules
        """
    )
    result = run(pytester, "--trace-config")
    result.assert_outcomes(passed=1)
    registrations = [line for line in result.stdout.lines if line.startswith("PLUGIN registered: <module 'pytest_onesided'")]
    assert len(registrations) == 1, result.stdout.str()
    result.stdout.fnmatch_lines(["*onesided-entry-point-0 at *pytest_onesided/__init__.py"])  # by the entry point
