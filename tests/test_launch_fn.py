"""onesided.launch: run a function on N ranks from a notebook or script."""

from __future__ import annotations

import time

import pytest

import onesided


def test_results_come_back_in_rank_order() -> None:
    def who(base):
        import onesided

        comm = onesided.COMM_WORLD
        return base + comm.rank, comm.size, comm.allgather(comm.rank)

    assert onesided.launch(who, 3, 100) == [(100 + r, 3, [0, 1, 2]) for r in range(3)]


def test_a_failing_rank_raises_with_its_traceback_and_stops_the_others() -> None:
    def fails(napping):
        import os
        import time

        import onesided

        comm = onesided.COMM_WORLD
        print("pid", os.getpid(), flush=True)
        if comm.rank == 1:
            raise KeyError("rank 1's own error")
        time.sleep(napping)  # the others would outlive the test if not stopped

    start = time.monotonic()
    with pytest.raises(onesided.LaunchError) as info:
        onesided.launch(fails, 3, 600)
    assert time.monotonic() - start < 30
    assert "rank 1 raised" in str(info.value) and "rank 1's own error" in str(info.value)


def test_a_job_that_outlives_its_timeout_is_killed() -> None:
    def hangs():
        import time

        time.sleep(600)

    start = time.monotonic()
    with pytest.raises(onesided.LaunchError, match="did not finish within 3 s"):
        onesided.launch(hangs, 2, timeout=3)
    assert time.monotonic() - start < 30


def test_functions_without_source_are_refused() -> None:
    with pytest.raises(onesided.LaunchError, match="source"):
        onesided.launch(eval("lambda: 1"), 2)
