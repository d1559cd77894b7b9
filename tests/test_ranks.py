"""onesided.Ranks and the %%ranks magic: ranks that live from call to call.

Every test stops its ranks (the fixture does, whatever happens) and has a
timeout; waiting is on events (sockets the ranks connect to), never sleeps.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import onesided

pytestmark = pytest.mark.timeout(180)

_SHM_OWNER = re.compile(r"^(?:onesided-(?:bell-)?)?(\d+)[:-]")


def shared_memory_of(pids: set[int]) -> list[str]:
    """/dev/shm entries whose name carries one of ``pids`` (see stale_shm.hpp)."""
    found = []
    for name in os.listdir("/dev/shm"):
        match = _SHM_OWNER.match(name)
        if match and int(match.group(1)) in pids:
            found.append(name)
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def ranks() -> Iterator[onesided.Ranks]:
    r = onesided.Ranks(2, echo=False)
    try:
        yield r
    finally:
        r.stop()


def values(results: list[onesided.RankResult]) -> list[object]:
    return [result.value for result in results]


def test_a_window_created_in_one_call_is_used_in_the_next(ranks: onesided.Ranks) -> None:
    ranks.run("import numpy as np, onesided\nrank = onesided.COMM_WORLD.rank")
    ranks.run("win = onesided.Window.Allocate(8, disp_unit=8)")
    ranks.run("win.Fence()\nwin.Put(np.array([100 + rank], np.int64), 1 - rank)\nwin.Fence()")
    assert values(ranks.run("int(np.frombuffer(win, np.int64)[0])")) == [101, 100]
    assert ranks.gather("rank") == [0, 1]
    ranks.run("win.Free()")


def test_output_comes_back_as_whole_lines_tagged_with_the_rank(
    ranks: onesided.Ranks, capsys: pytest.CaptureFixture[str]
) -> None:
    ranks.echo = True
    results = ranks.run(textwrap.dedent("""\
        import os, sys, onesided
        rank = onesided.COMM_WORLD.rank
        for i in range(50):
            print(f"rank {rank} ", end="", flush=True)   # a line written in three pieces,
            os.write(1, b"line ")                         # one of them below Python
            print(i, flush=True)
        print(f"error {rank}", file=sys.stderr)
        print("unfinished", end="")
    """))
    out, err = capsys.readouterr()
    for rank in (0, 1):
        mine = [line for line in out.splitlines() if line.startswith(f"[{rank}] ")]
        assert mine == [f"[{rank}] rank {rank} line {i}" for i in range(50)] + [f"[{rank}] unfinished"]
        assert results[rank].stdout.splitlines()[-1] == "unfinished"
        assert f"[{rank}] error {rank}" in err.splitlines()
    assert len(out.splitlines()) == 102  # nothing else, and no two lines merged


def test_an_exception_on_one_rank_shows_its_traceback_and_the_ranks_carry_on(ranks: onesided.Ranks) -> None:
    ranks.run("import onesided\nrank = onesided.COMM_WORLD.rank")
    with pytest.raises(onesided.CellError) as info:
        ranks.run("x = rank\nif rank == 1:\n    raise ValueError('only on rank 1')\n")
    assert info.value.failed_ranks == [1]
    assert "[1]     raise ValueError('only on rank 1')" in str(info.value)
    assert "[1] ValueError: only on rank 1" in str(info.value)
    assert info.value.results[0].error is None
    # Both ranks serve the next call, collectives included.
    assert values(ranks.run("onesided.COMM_WORLD.allgather(x)")) == [[0, 1], [0, 1]]


def test_a_rank_left_waiting_by_a_failed_rank_is_interrupted(ranks: onesided.Ranks) -> None:
    ranks.grace = 0.5
    ranks.run("import onesided\nrank = onesided.COMM_WORLD.rank")
    with pytest.raises(onesided.CellError) as info:
        ranks.run("if rank == 1:\n    raise ValueError('before the barrier')\nonesided.COMM_WORLD.Barrier()")
    assert info.value.failed_ranks == [0, 1]
    assert "rank 1 raised" in str(info.value) and "rank 0 was interrupted" in str(info.value)
    assert "[0] KeyboardInterrupt" in str(info.value)
    assert values(ranks.run("rank + 10")) == [10, 11]


def entered(count: int) -> tuple[socket.socket, str]:
    """A listening socket and the code with which each rank connects to it."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    code = f"import socket\nentered = socket.create_connection(('127.0.0.1', {port}))\n"
    return listener, code


def interrupt_when_entered(listener: socket.socket, count: int, interrupt: object) -> threading.Thread:
    """Once ``count`` ranks have connected to ``listener``, call ``interrupt``."""

    def wait_then_interrupt() -> None:
        # Still listening after the interrupt: a rank interrupted inside
        # create_connection may connect again.
        with listener:
            connections = [listener.accept()[0] for _ in range(count)]
            interrupt()  # type: ignore[operator]
        for connection in connections:
            connection.close()

    thread = threading.Thread(target=wait_then_interrupt, daemon=True)
    thread.start()
    return thread


def test_an_interrupt_stops_a_stuck_cell_and_the_ranks_live_on(ranks: onesided.Ranks) -> None:
    ranks.run("import onesided\nrank = onesided.COMM_WORLD.rank")
    listener, connect = entered(2)
    # SIGINT to this process (what a kernel interrupt is) while run() waits.
    thread = interrupt_when_entered(listener, 2, lambda: os.kill(os.getpid(), signal.SIGINT))
    with pytest.raises(KeyboardInterrupt):
        # Rank 0 waits for a barrier rank 1 never enters; rank 1 for data that never comes.
        ranks.run(connect + "if rank == 0:\n    onesided.COMM_WORLD.Barrier()\nelse:\n    entered.recv(1)\n")
    thread.join()
    assert values(ranks.run("rank * 2")) == [0, 2]


def test_an_interrupt_ends_a_onesided_wait_on_every_rank_and_the_window_lives_on(ranks: onesided.Ranks) -> None:
    """Wait_notify for a notification nobody sends, on both ranks: one
    interrupt raises KeyboardInterrupt out of the call on every rank (the
    wait checks for signals), no rank has to be stopped, and the window
    works in the next cell (Fence, then a notification that does come)."""
    ranks.run("import onesided\nrank = onesided.COMM_WORLD.rank\n"
              "win = onesided.Window.Allocate(8, info={'provider': 'shm', 'onesided_notifications': '1'})")
    listener, connect = entered(2)
    thread = interrupt_when_entered(listener, 2, ranks.interrupt)
    with pytest.raises(KeyboardInterrupt):
        ranks.run(connect + "win.Wait_notify(0, 1)\n")
    thread.join()
    assert ranks.running
    got = ranks.run("win.Fence()\nwin.Notify(1 - rank, 0)\nwin.Wait_notify(0, 1)\nwin.Fence()\n'woken'")
    assert values(got) == ["woken", "woken"]


class _NoteWatcher:
    """Stands in for sys.stderr; ``noted`` is set once the "did not stop" note is written."""

    def __init__(self) -> None:
        self.noted = threading.Event()
        self.text = ""

    def write(self, text: str) -> int:
        self.text += text
        if "did not stop" in self.text:
            self.noted.set()
        return len(text)

    def flush(self) -> None:
        pass


def test_a_rank_stuck_in_a_c_call_survives_one_interrupt_and_a_second_stops_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ranks = onesided.Ranks(2, echo=False)
    ranks.grace = 0.5
    try:
        pids = set(values(ranks.run("import os, onesided\nos.getpid()")))
        ranks.run("win = onesided.Window.Allocate(8, info={'provider': 'shm', 'onesided_notifications': '1'})")
        listener, _ = entered(2)
        watcher = _NoteWatcher()
        monkeypatch.setattr(sys, "stderr", watcher)

        def interrupt_twice() -> None:
            ranks.interrupt()
            watcher.noted.wait()  # the ranks are still stuck after the first
            ranks.interrupt()

        # A rank that does not stop on SIGINT, as one inside another
        # library's C call that never checks for signals: the loop takes
        # it back into Wait_notify each time the interrupt raises there.
        port = listener.getsockname()[1]
        stuck = textwrap.dedent(f"""\
            import socket
            entered = None
            while True:
                try:
                    if entered is None:
                        entered = socket.create_connection(('127.0.0.1', {port}))
                    win.Wait_notify(0, 1)
                    break
                except KeyboardInterrupt:
                    pass
        """)
        thread = interrupt_when_entered(listener, 2, interrupt_twice)
        with pytest.raises(onesided.RanksError, match="did not respond to SIGINT"):
            ranks.run(stuck)
        thread.join()
        assert "rank(s) 0, 1 did not stop" in watcher.text
        assert not ranks.running
        assert not [pid for pid in pids if alive(pid)]
        assert shared_memory_of(pids) == []
    finally:
        ranks.stop()


def test_stop_leaves_no_process_and_no_shared_memory() -> None:
    ranks = onesided.Ranks(2, echo=False)
    try:
        pids = set(values(ranks.run("import os, onesided\nos.getpid()")))
        ranks.run("win = onesided.Window.Allocate(64, info={'provider': 'shm'})")
        assert shared_memory_of(pids)  # the check below can see them
        launcher = ranks._proc
        assert launcher is not None
        directory = Path(ranks._dir)
    finally:
        ranks.stop()
    assert launcher.returncode == 0
    assert not [pid for pid in pids if alive(pid)]
    assert shared_memory_of(pids) == []
    assert not directory.exists()
    with pytest.raises(onesided.RanksError, match="stopped"):
        ranks.run("1")


def test_ranks_a_program_forgets_end_with_it(tmp_path: Path) -> None:
    script = tmp_path / "forgets.py"
    script.write_text(textwrap.dedent("""\
        import onesided
        ranks = onesided.Ranks(2, echo=False)
        code = "import os, onesided\\nwin = onesided.Window.Allocate(64, info={'provider': 'shm'})\\nos.getpid()"
        print(*[r.value for r in ranks.run(code)], flush=True)
    """))
    # Files, not pipes: reading a pipe to its end would also wait for the
    # launcher and ranks, which inherit it, and hide ranks that outlive it.
    out, err = tmp_path / "out", tmp_path / "err"
    with out.open("w") as stdout, err.open("w") as stderr:
        proc = subprocess.run([sys.executable, str(script)], stdout=stdout, stderr=stderr, timeout=120)
    assert proc.returncode == 0, err.read_text()
    pids = {int(word) for word in out.read_text().split()}
    assert len(pids) == 2
    assert not [pid for pid in pids if alive(pid)]
    assert shared_memory_of(pids) == []


def test_bad_arguments_are_refused_before_anything_starts() -> None:
    with pytest.raises(onesided.ArgumentError, match="at least 1"):
        onesided.Ranks(0)
    with pytest.raises(onesided.ArgumentTypeError, match="must be an int"):
        onesided.Ranks(2.0)  # type: ignore[arg-type]


def test_import_onesided_does_not_import_ipython() -> None:
    code = "import sys, onesided; assert 'IPython' not in sys.modules; assert onesided.load_ipython_extension"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_the_ranks_magic_runs_cells_on_live_ranks_and_gathers() -> None:
    interactiveshell = pytest.importorskip("IPython.core.interactiveshell")
    shell = interactiveshell.InteractiveShell.instance()
    try:
        shell.run_line_magic("load_ext", "onesided")
        result = shell.run_cell("%%ranks -n 2\nimport onesided\nrank = onesided.COMM_WORLD.rank\nx = 10 * rank")
        assert result.success, result.error_in_exec
        assert shell.run_cell("%%ranks --gather x --gather rank\ny = x + 1").success
        assert shell.user_ns["x"] == [0, 10] and shell.user_ns["rank"] == [0, 1]
        assert shell.run_cell("%ranks --gather y").success
        assert shell.user_ns["y"] == [1, 11]
        failed = shell.run_cell("%%ranks\nif rank == 1:\n    1 / 0\n")
        assert isinstance(failed.error_in_exec, onesided.CellError)
        assert failed.error_in_exec.failed_ranks == [1]
        assert shell.run_cell("%%ranks -n 3\nx").error_in_exec is not None  # 2 are running
        assert shell.run_cell("%ranks --gather x").success  # same ranks, same x
        assert shell.user_ns["x"] == [0, 10]
    finally:
        shell.run_cell("%ranks stop")
        interactiveshell.InteractiveShell.clear_instance()
    assert "ranks" in shell.magics_manager.magics["cell"]
