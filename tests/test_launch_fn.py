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


def test_an_interrupted_launch_stops_its_ranks(tmp_path) -> None:
    """KeyboardInterrupt in the caller (a notebook's interrupt, Ctrl-C in
    pytest) stops the launcher and its ranks, which live in a session of
    their own and would otherwise run on until their timeout."""
    import os
    import select
    import signal
    import subprocess
    import sys
    import textwrap

    from conftest import alive

    fifo = tmp_path / "pids"
    os.mkfifo(fifo)
    script = tmp_path / "caller.py"
    script.write_text(textwrap.dedent(f"""
        import onesided

        def waits():
            import os, time
            with open({str(fifo)!r}, "w") as f:
                f.write(f"{{os.getpid()}}\\n")
            time.sleep(600)

        onesided.launch(waits, 2, timeout=600)
    """))
    caller = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Read-write, so the FIFO always has a writer: select then wakes on data
    # only, never on a rank closing its end.
    reader = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    pids: list[int] = []
    text = ""
    deadline = time.monotonic() + 60
    try:
        # Each rank's pid arrives through the FIFO once it runs: wait for both.
        while len(pids) < 2 and time.monotonic() < deadline:
            ready, _, _ = select.select([reader], [], [], deadline - time.monotonic())
            chunk = os.read(reader, 4096).decode() if ready else ""
            text += chunk
            pids = [int(p) for p in text.split()]
        assert len(pids) == 2, f"the ranks did not start: {text!r}"
        caller.send_signal(signal.SIGINT)
        _, err = caller.communicate(timeout=30)
    finally:
        os.close(reader)
        if caller.poll() is None:
            caller.kill()
            caller.communicate()
    assert "KeyboardInterrupt" in err, err
    assert [p for p in pids if alive(p)] == [], "ranks outlived the interrupted launch"
