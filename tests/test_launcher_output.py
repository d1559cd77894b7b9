"""What ``python -m onesided run`` does with its ranks' output
(python/onesided/run/_output.py): whole lines that never merge, ``--tag-output``,
``--output-dir``, stdout and stderr apart, bytes unharmed, and the last
lines of ranks that are stopped or that end without a newline.

The rank scripts do not import onesided (they read their rank from
``ONESIDED_RANK``), so each job starts quickly; every rank records its pid,
and whatever a job leaves behind is killed and fails the test. Remote ranks
go through the remote shell agent with ``sh -c`` as the remote shell, so
their output takes the remote path on this machine.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import select
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import alive

if importlib.util.find_spec("pytest_timeout") is not None:
    pytestmark = pytest.mark.timeout(120)

JOB_LIMIT = 60.0
"""Hard limit for one launcher run: past it the job is stopped and the test fails."""

PREAMBLE = """\
import os, signal, sys
from pathlib import Path
RANK = int(os.environ["ONESIDED_RANK"])
OUT = Path(sys.argv[1])
(OUT / f"rank{RANK}.pid").write_text(str(os.getpid()))

def write(fd, data, piece=None):
    # os.write in pieces of `piece` bytes: a line reaches the pipe in many writes
    piece = piece or len(data)
    for start in range(0, len(data), piece):
        os.write(fd, data[start:start + piece])
"""

REMOTE = ["--hosts", "elsewhere", "--rsh", "sh -c {command}", "--coordinator", "127.0.0.1"]
"""Options that start every rank through the remote shell agent (sh -c runs it here)."""


Run = Callable[..., subprocess.CompletedProcess[bytes]]


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    """``run(n, body, *options)``: run PREAMBLE + body as n ranks, return the
    launcher's status and its stdout and stderr as bytes. At teardown no rank
    may be left running."""
    directories: list[Path] = []

    def job(n: int, body: str, *options: str) -> subprocess.CompletedProcess[bytes]:
        directory = tmp_path / f"job{len(directories)}"
        directory.mkdir()
        directories.append(directory)
        script = directory / "script.py"
        script.write_text(PREAMBLE + textwrap.dedent(body))
        command = [sys.executable, "-m", "onesided", "run", "-n", str(n), *options, str(script), str(directory)]
        # PYTHONUNBUFFERED too: what the launcher sets for its ranks is under test.
        env = {k: v for k, v in os.environ.items() if not k.startswith("ONESIDED_") and k != "PYTHONUNBUFFERED"}
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                start_new_session=True)
        try:
            out, err = proc.communicate(timeout=JOB_LIMIT)
        except subprocess.TimeoutExpired:
            proc.terminate()  # the launcher stops its ranks
            try:
                out, err = proc.communicate(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                out, err = proc.communicate()
            pytest.fail(f"launcher still running after {JOB_LIMIT} s:\n{err.decode(errors='replace')[-3000:]}")
        return subprocess.CompletedProcess(command, proc.returncode, out, err)

    yield job
    left = []
    for directory in directories:
        for path in directory.glob("*.pid"):
            pid = int(path.read_text() or 0)
            if pid and alive(pid):
                left.append(pid)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
    assert not left, f"ranks left running: {left}"


LONG_LINES = """
lines = [b"%d:%d:" % (RANK, i) + b"x" * 20000 + b"\\n" for i in range(60)]
for line in lines:
    write(1, line, piece=97)
"""


@pytest.mark.parametrize("where", [[], REMOTE], ids=["local", "remote"])
def test_long_lines_from_four_ranks_never_merge(run: Run, where: list[str]) -> None:
    # Each 20 kB line reaches its pipe in ~200 writes while three other ranks
    # do the same: relaying what was read as it came would cut lines apart.
    finished = run(4, LONG_LINES, *where)
    assert finished.returncode == 0, finished.stderr.decode()
    lines = finished.stdout.split(b"\n")
    assert lines.pop() == b"", "the output ends with a newline"
    seen: dict[int, list[int]] = {r: [] for r in range(4)}
    for line in lines:
        match = re.fullmatch(rb"(\d):(\d+):x{20000}", line)
        assert match, f"a merged or broken line: {line[:60]!r}...{line[-60:]!r} ({len(line)} bytes)"
        seen[int(match[1])].append(int(match[2]))
    assert seen == {r: list(range(60)) for r in range(4)}


TAGGED = """
os.write(1, b"out line one of %d\\nout line two of %d\\n" % (RANK, RANK))
os.write(2, b"err line of %d\\n" % RANK)
os.write(1, b"unterminated of %d" % RANK)
"""


@pytest.mark.parametrize("where", [[], REMOTE], ids=["local", "remote"])
def test_tag_output_prefixes_every_line_with_its_rank(run: Run, where: list[str]) -> None:
    finished = run(3, TAGGED, "--tag-output", *where)
    assert finished.returncode == 0, finished.stderr.decode()
    out = finished.stdout.decode().splitlines()
    assert finished.stdout.endswith(b"\n"), "a tagged stream ends its last line"
    assert sorted(out) == sorted(
        f"[{r}] {text} of {r}" for r in range(3) for text in ("out line one", "out line two", "unterminated")
    )
    assert sorted(finished.stderr.decode().splitlines()) == [f"[{r}] err line of {r}" for r in range(3)]


def test_short_option_l_is_tag_output(run: Run) -> None:
    finished = run(2, TAGGED, "-l")
    assert finished.returncode == 0, finished.stderr.decode()
    assert re.fullmatch(rb"(\[[01]\] [^\n]* of [01]\n)+", finished.stdout), finished.stdout


SEPARATE = """
for i in range(50):
    os.write(1, b"stdout %d %d\\n" % (RANK, i))
    os.write(2, b"stderr %d %d\\n" % (RANK, i))
"""


@pytest.mark.parametrize("where", [[], REMOTE], ids=["local", "remote"])
def test_stderr_is_kept_apart_from_stdout(run: Run, where: list[str]) -> None:
    finished = run(2, SEPARATE, *where)
    assert finished.returncode == 0, finished.stderr.decode()
    assert sorted(finished.stdout.decode().splitlines()) == sorted(f"stdout {r} {i}" for r in range(2) for i in range(50))
    assert sorted(finished.stderr.decode().splitlines()) == sorted(f"stderr {r} {i}" for r in range(2) for i in range(50))


BINARY = """
data = bytes(range(256)) * 64 + b"\\xff\\xfe no newline at the end \\x00"
(OUT / f"expected{RANK}").write_bytes(data)
write(1, data, piece=1000)
write(2, data[::-1], piece=333)
"""


@pytest.mark.parametrize("where", [[], REMOTE], ids=["local", "remote"])
def test_output_dir_holds_each_ranks_exact_bytes(run: Run, tmp_path: Path, where: list[str]) -> None:
    outdir = tmp_path / "made" / "by-the-launcher"
    finished = run(3, BINARY, "--output-dir", str(outdir), "--tag-output", *where)
    assert finished.returncode == 0, finished.stderr.decode()
    assert finished.stdout == b"" and finished.stderr == b"", "everything went to the files"
    assert sorted(p.name for p in outdir.iterdir()) == [f"rank.{r}.{s}" for r in range(3) for s in ("stderr", "stdout")]
    for r in range(3):
        expected = (tmp_path / "job0" / f"expected{r}").read_bytes()
        assert (outdir / f"rank.{r}.stdout").read_bytes() == expected  # no tag, no added newline
        assert (outdir / f"rank.{r}.stderr").read_bytes() == expected[::-1]


def test_binary_output_of_one_rank_passes_through_unharmed(run: Run) -> None:
    finished = run(1, BINARY)
    assert finished.returncode == 0, finished.stderr.decode()
    expected = (Path(finished.args[-1]) / "expected0").read_bytes()
    assert finished.stdout == expected
    assert finished.stderr == expected[::-1]


UNTERMINATED = """
os.write(1, b"line of %d\\n" % RANK)
os.write(1, b"tail of %d" % RANK)
"""


def test_unterminated_last_lines_come_out_whole(run: Run) -> None:
    finished = run(4, UNTERMINATED)
    assert finished.returncode == 0, finished.stderr.decode()
    lines = finished.stdout.decode().splitlines()
    assert sorted(lines) == sorted(f"{kind} of {r}" for r in range(4) for kind in ("line", "tail"))
    # Untagged, the relay adds a newline only between sources: the job's
    # very last byte is the last rank's own.
    assert not finished.stdout.endswith(b"\n")


LAST_WORDS = """
fifo = OUT / "ready"
try:
    os.mkfifo(fifo)  # by whichever rank comes first
except FileExistsError:
    pass
if RANK == 0:
    def last_words(signum, frame):
        # Far more than a pipe holds: the launcher must read all of it after the stop.
        write(1, b"".join(b"rank 0 last words %d\\n" % i for i in range(20000)))
        os.write(1, b"rank 0 final line\\n")
        os._exit(0)
    signal.signal(signal.SIGTERM, last_words)
    print("rank 0 printed before the stop")  # lost in a buffer unless the launcher made ranks unbuffered
    with open(fifo, "w") as ready:  # waits for rank 1 to open it
        ready.write("ready")
    while True:
        signal.pause()
else:
    with open(fifo) as ready:  # returns once rank 0, its handler set, has opened it
        assert ready.read() == "ready"
    write(2, b"".join(b"rank 1 %d " % i + b"z" * 1000 + b"\\n" for i in range(1000)))
    os.write(2, b"rank 1 fails now\\n")
    sys.exit(3)
"""


@pytest.mark.parametrize("where", [[], REMOTE], ids=["local", "remote"])
def test_last_lines_of_a_stopped_rank_are_not_lost(run: Run, where: list[str]) -> None:
    # Rank 1 fails; the launcher stops rank 0, which answers SIGTERM with
    # 20000 lines and exits 0. All of them must come out before it returns.
    finished = run(2, LAST_WORDS, *where)
    assert finished.returncode == 3, finished.stderr.decode()
    lines = finished.stdout.decode().splitlines()
    assert lines == ["rank 0 printed before the stop"] + [f"rank 0 last words {i}" for i in range(20000)] + [
        "rank 0 final line"]
    err = finished.stderr.decode()
    # The failed rank's own words (1 MB of them) come before the launcher's report of it.
    assert err.count(" " + "z" * 1000 + "\n") == 1000
    assert re.search(r"rank 1 fails now\n(.*\n)*onesided run: rank 1 (\(on elsewhere\) )?exited with status 3", err), err


HUGE = """
line = b"%d" % RANK + b"y" * 999 + b"\\n"
for _ in range(4):
    write(2, line * 1024, piece=65536)  # 1 MB to stderr, then 1 MB to stdout, four times
    write(1, line * 1024, piece=65536)
"""


def test_huge_output_on_both_streams_does_not_block(run: Run) -> None:
    # 8 MB per rank, alternating streams in chunks larger than a pipe: a
    # launcher that did not read both streams of every rank would stall them.
    finished = run(2, HUGE, "--timeout", "30")
    assert finished.returncode == 0, finished.stderr.decode()[-2000:]
    for data in (finished.stdout, finished.stderr):
        lines = data.split(b"\n")
        assert lines.pop() == b""
        assert sorted(set(lines)) == [b"0" + b"y" * 999, b"1" + b"y" * 999]
        assert len(lines) == 2 * 4 * 1024


def test_output_dir_that_cannot_be_made_is_a_usage_error(run: Run, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    finished = run(2, "raise SystemExit('must not run')\n", "--output-dir", str(blocker / "sub"))
    assert finished.returncode == 2
    assert str(blocker) in finished.stderr.decode() and b"must not run" not in finished.stderr


HELD_OPEN = """
import subprocess, time
ready_read, ready_write = os.pipe()
# In a session of its own, so stopping the rank's group does not end it.
held = subprocess.Popen(
    [sys.executable, "-c", "import os, sys, time; os.write(1, b'written by a process the rank started\\\\n'); "
     "os.write(int(sys.argv[1]), b'x'); time.sleep(600)", str(ready_write)],
    pass_fds=[ready_write], start_new_session=True)
(OUT / "held.pid").write_text(str(held.pid))
os.close(ready_write)
assert os.read(ready_read, 1) == b"x"  # its line is in the pipe
"""


def test_output_held_open_after_the_rank_exits_is_given_up(run: Run) -> None:
    # The rank exits 0; a process it started keeps its stdout and stderr
    # open. The launcher returns anyway, with what was written, and says why.
    finished = run(1, HELD_OPEN)
    held = Path(finished.args[-1]) / "held.pid"
    if held.exists():  # expected to outlive the job: ended here, not counted as a rank left behind
        with contextlib.suppress(ProcessLookupError):
            gone = os.pidfd_open(int(held.read_text()))
            os.kill(int(held.read_text()), signal.SIGKILL)
            select.select([gone], [], [], 10)  # readable once it has exited
            os.close(gone)
    assert finished.returncode == 0, finished.stderr.decode()
    assert finished.stdout == b"written by a process the rank started\n"
    assert b"onesided run: not waiting for rank 0's stderr, rank 0's stdout: held open by a process" in finished.stderr
