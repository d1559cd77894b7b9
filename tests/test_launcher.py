"""Tests for ``python -m onesided run`` and the launcher's COMM_WORLD.

Every job runs in its own session with a hard time limit; whatever it leaves
behind (ranks and their children record their pids) is killed at teardown,
so a failing test cannot leak processes.  Rank scripts check their results
themselves and exit non-zero on a mismatch; tests check the exit status and
the lines every rank prints.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import alive

PYTHON_DIR = Path(__file__).resolve().parents[1] / "python"
# Test the onesided that is importable (an installed build, which has the
# compiled core); only without one fall back to the source tree.
SOURCE_PATH = [] if importlib.util.find_spec("onesided") else [PYTHON_DIR]
sys.path[:0] = map(str, SOURCE_PATH)

from onesided.comm._comm import WorldError  # noqa: E402
from onesided.comm._world import comm_from_environment  # noqa: E402

if importlib.util.find_spec("pytest_timeout") is not None:
    # Without the plugin the subprocess limits below still bound every test.
    pytestmark = pytest.mark.timeout(120)

JOB_LIMIT = 60.0
"""Hard limit for one launcher run; a hang is a failure, never a stuck suite."""

PROMPT = 20.0
"""A failed job must be torn down well within this (ranks sleep for 600 s)."""

PREAMBLE = """\
import os, signal, subprocess, sys, time
from pathlib import Path
from onesided.comm._comm import WorldError
from onesided.comm._world import world

OUT = Path(sys.argv[1])
comm = world()
(OUT / f"rank{comm.rank}.pid").write_text(str(os.getpid()))

def say(line):
    os.write(1, f"{line}\\n".encode())  # one write per line: ranks share stdout
"""
"""Start of every rank script: ``comm``, ``say``, and the rank's pid recorded in OUT."""


def environment(extra_path: Sequence[Path] = ()) -> dict[str, str]:
    """os.environ without launcher variables, importing onesided as this test does."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONESIDED_")}
    paths = [*map(str, SOURCE_PATH), *map(str, extra_path), *filter(None, [env.get("PYTHONPATH")])]
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


@dataclass
class Finished:
    returncode: int
    stdout: str
    stderr: str
    elapsed: float


class Job:
    """One ``python -m onesided run`` in its own session, output in files."""

    def __init__(self, directory: Path, command: list[str], env: dict[str, str]) -> None:
        self.directory = directory
        self.command = command
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with open(self.directory / "stdout", "wb") as out, open(self.directory / "stderr", "wb") as err:
            self.started = time.monotonic()
            self.proc = subprocess.Popen(
                self.command, env=self.env, stdout=out, stderr=err, start_new_session=True
            )

    def wait(self, limit: float = JOB_LIMIT) -> Finished:
        assert self.proc is not None
        try:
            returncode = self.proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            self.kill_everything()
            pytest.fail(f"launcher still running after {limit} s:\n{self.read('stderr')}")
        return Finished(returncode, self.read("stdout"), self.read("stderr"), time.monotonic() - self.started)

    def run(self, limit: float = JOB_LIMIT) -> Finished:
        self.start()
        return self.wait(limit)

    def read(self, name: str) -> str:
        return (self.directory / name).read_text(errors="replace")

    def recorded_pids(self) -> dict[str, int]:
        """Pids written by ranks (``rankN``) and their children, by file stem."""
        texts = {path.stem: path.read_text() for path in self.directory.glob("*.pid")}
        return {name: int(text) for name, text in texts.items() if text}  # "" if caught mid-write

    def kill_everything(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        for pid in self.recorded_pids().values():
            if alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


LaunchFactory = Callable[..., Job]


@pytest.fixture
def launch(tmp_path: Path) -> Iterator[LaunchFactory]:
    """Return ``launch(n, body, *options)``: a Job running PREAMBLE + body as n ranks."""
    jobs: list[Job] = []

    def factory(n: int, body: str, *options: str) -> Job:
        directory = tmp_path / f"job{len(jobs)}"
        directory.mkdir()
        script = directory / "script.py"
        script.write_text(PREAMBLE + textwrap.dedent(body))
        command = [sys.executable, "-m", "onesided", "run", "-n", str(n), *options]
        command += [str(script), str(directory)]
        jobs.append(Job(directory, command, environment()))
        return jobs[-1]

    yield factory
    for job in jobs:
        job.kill_everything()


def assert_all_gone(job: Job, expected: Sequence[str]) -> None:
    pids = job.recorded_pids()
    assert set(expected) <= set(pids), f"missing pid files: {set(expected) - set(pids)}"
    survivors = {name: pid for name, pid in pids.items() if alive(pid)}
    assert not survivors, f"left running: {survivors}"


def test_collectives_on_four_ranks(launch: LaunchFactory) -> None:
    finished = launch(
        4,
        """
        rank = comm.Get_rank()
        assert (rank, comm.Get_size(), comm.rank, comm.size) == (int(os.environ["ONESIDED_RANK"]), 4, rank, 4)
        assert repr(comm).startswith(f"Comm(rank={rank}, size=4, coordinator='127.0.0.1:"), repr(comm)
        assert comm.allgather(rank) == [0, 1, 2, 3]
        assert comm.allgather({"rank": rank}) == [{"rank": r} for r in range(4)]
        mine = {"root": rank, "data": list(range(rank * 10))}
        assert comm.bcast(mine if rank == 2 else None, root=2) == {"root": 2, "data": list(range(20))}
        assert comm.bcast(rank) == 0
        gathered = comm.gather(rank * rank, root=1)
        assert gathered == ([0, 1, 4, 9] if rank == 1 else None), gathered
        for _ in range(200):
            comm.Barrier()
        comm.barrier()
        # Larger than the socket buffers: exercises partial sends and reads.
        big = comm.allgather(bytes([rank]) * 3_000_000)
        assert [(len(b), b[0], b[-1]) for b in big] == [(3_000_000, r, r) for r in range(4)]
        say(f"rank {rank} ok")
        """,
    ).run()
    assert finished.returncode == 0, finished.stderr
    assert sorted(finished.stdout.splitlines()) == [f"rank {r} ok" for r in range(4)]
    assert "onesided run:" not in finished.stderr and "Traceback" not in finished.stderr


def test_threads_may_share_the_world(launch: LaunchFactory) -> None:
    finished = launch(
        3,
        """
        import threading
        threads = [threading.Thread(target=lambda: [comm.Barrier() for _ in range(100)]) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert comm.allgather(comm.rank) == [0, 1, 2]
        say(f"rank {comm.rank} ok")
        """,
    ).run()
    assert finished.returncode == 0, finished.stderr
    assert sorted(finished.stdout.splitlines()) == [f"rank {r} ok" for r in range(3)]


def test_first_failing_rank_sets_the_status(launch: LaunchFactory) -> None:
    # Rank 2 says bye, then stays alive (in a later atexit handler) until rank
    # 0 has failed because of it and died.  The launcher, which usually reaps
    # rank 0 first, must blame rank 2, whose departure came first.
    job = launch(
        4,
        """
        import atexit
        fifo = OUT / "fifo"
        if comm.rank == 2:
            os.mkfifo(fifo)
            # Registered before the first collective connects, so it runs after the bye;
            # read() returns once rank 0, the only writer, is dead.
            atexit.register(lambda: open(fifo).read())
        comm.Barrier()
        if comm.rank == 2:
            sys.exit(3)
        if comm.rank == 0:
            try:
                comm.Barrier()
            except WorldError as exc:
                say(f"rank 0: {exc}")
                fifo_writer = open(fifo, "w")
                os._exit(1)
        time.sleep(600)  # ranks 1 and 3 do not depart until the launcher stops them
        """,
    )
    finished = job.run()
    assert finished.returncode == 3, finished.stderr
    report = r"onesided run: rank 2 exited with status 3(; stopping the other \d ranks?)?\n"
    assert re.search(report, finished.stderr), finished.stderr
    # Whether rank 0 entered barrier #1 before or after rank 2's bye.
    said_bye = (
        r"rank 0: barrier #1 failed: "
        r"rank 2 is exiting \(said bye\) (without joining barrier #1|after collective #0)"
    )
    assert re.search(said_bye, finished.stdout), finished.stdout
    assert finished.elapsed < PROMPT
    assert_all_gone(job, ["rank0", "rank1", "rank2", "rank3"])


@pytest.mark.parametrize(
    ("death", "status", "report"),
    [
        ("os._exit(7)", 7, "rank 1 exited with status 7"),
        ("os.kill(os.getpid(), signal.SIGKILL)", 137, "rank 1 was killed by SIGKILL (status 137)"),
    ],
)
def test_dead_rank_stops_the_job(launch: LaunchFactory, death: str, status: int, report: str) -> None:
    job = launch(
        4,
        f"""
        if comm.rank == 0:
            # A grandchild that ignores SIGTERM: only the group SIGKILL ends it.
            child = subprocess.Popen(
                [sys.executable, "-c",
                 "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print(flush=True); "
                 "time.sleep(600)"],
                stdout=subprocess.PIPE,
            )
            child.stdout.readline()
            (OUT / "grandchild.pid").write_text(str(child.pid))
        comm.Barrier()
        if comm.rank == 1:
            {death}
        elif comm.rank == 3:
            time.sleep(600)
        else:
            comm.Barrier()
        """,
    )
    finished = job.run()
    assert finished.returncode == status, finished.stderr
    # The others are normally still running when rank 1's exit is reported.
    line = rf"onesided run: {re.escape(report)}(; stopping the other \d ranks?)?\n"
    assert re.search(line, finished.stderr), finished.stderr
    assert finished.elapsed < PROMPT
    assert_all_gone(job, ["rank0", "rank1", "rank2", "rank3", "grandchild"])


def test_abort_stops_the_job(launch: LaunchFactory) -> None:
    job = launch(
        3,
        """
        comm.Barrier()
        if comm.rank == 1:
            comm.Abort(9)
        comm.Barrier()
        """,
    )
    finished = job.run()
    assert finished.returncode == 9, finished.stderr
    assert "onesided: rank 1 of 3 called Abort(9)" in finished.stderr
    assert "onesided run: rank 1 exited with status 9" in finished.stderr
    assert finished.elapsed < PROMPT
    assert_all_gone(job, ["rank0", "rank1", "rank2"])


@pytest.mark.parametrize("connected", [True, False], ids=["after-a-collective", "never-connected"])
def test_clean_early_exit_fails_waiting_ranks(launch: LaunchFactory, connected: bool) -> None:
    # Rank 0 leaves with status 0 while the others wait for it; whether it
    # ever connected (bye) or not (only the launcher sees it go), they must
    # get WorldError instead of hanging.
    job = launch(
        4,
        f"""
        if {connected}:
            comm.Barrier()
        if comm.rank == 0:
            sys.exit(0)
        try:
            comm.Barrier()
        except WorldError as exc:
            say(f"rank {{comm.rank}}: {{exc}}")
            sys.exit(5)
        """,
    )
    finished = job.run()
    assert finished.returncode == 5, finished.stderr
    assert re.search(r"onesided run: rank [123] exited with status 5", finished.stderr), finished.stderr
    expected = r"rank [123]: barrier #\d failed: rank 0 (is exiting \(said bye\)|exited with status 0)"
    assert re.search(expected, finished.stdout), finished.stdout
    assert finished.elapsed < PROMPT
    # Without the first barrier a rank may be stopped before recording its pid.
    assert_all_gone(job, ["rank0", "rank1", "rank2", "rank3"] if connected else [])


def test_mismatched_collectives_fail(launch: LaunchFactory) -> None:
    finished = launch(
        2,
        """
        try:
            if comm.rank == 0:
                comm.Barrier()
            else:
                comm.allgather(1)
        except WorldError as exc:
            say(f"rank {comm.rank}: {exc}")
            sys.exit(4)
        """,
    ).run()
    assert finished.returncode == 4, finished.stderr
    mismatch = (
        r"rank [01]: (barrier|allgather) #0 failed: "
        r"(rank 1 called allgather while rank 0 called barrier"
        r"|rank 0 called barrier while rank 1 called allgather)"
    )
    assert re.search(mismatch, finished.stdout), finished.stdout
    assert finished.elapsed < PROMPT


def test_bcast_roots_must_agree(launch: LaunchFactory) -> None:
    finished = launch(
        2,
        """
        try:
            comm.bcast("x", root=comm.rank)
        except WorldError as exc:
            say(f"rank {comm.rank}: {exc}")
            sys.exit(4)
        """,
    ).run()
    assert finished.returncode == 4, finished.stderr
    disagreement = r"rank ([01]) called bcast\(root=\1\) while rank ([01]) called bcast\(root=\2\)"
    assert re.search(disagreement, finished.stdout), finished.stdout


def test_timeout_kills_a_hung_job(launch: LaunchFactory) -> None:
    job = launch(
        3,
        """
        if comm.rank == 0:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # must be SIGKILLed after the grace period
        time.sleep(600)
        """,
        "--timeout",
        "1",
    )
    finished = job.run()
    assert finished.returncode == 124, finished.stderr
    assert "onesided run: timeout after 1 s; stopping 3 ranks" in finished.stderr
    assert finished.elapsed < PROMPT
    assert_all_gone(job, [])


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_to_launcher_stops_the_job(launch: LaunchFactory, signum: int, status: int) -> None:
    job = launch(
        3,
        """
        comm.Barrier()
        if comm.rank == 0:
            (OUT / "ready").write_text("")
        time.sleep(600)
        """,
    )
    job.start()
    ready = job.directory / "ready"
    deadline = time.monotonic() + JOB_LIMIT
    while not ready.exists():  # the test polls; the launcher under test does not
        assert time.monotonic() < deadline, job.read("stderr")
        assert job.proc is not None and job.proc.poll() is None, job.read("stderr")
        time.sleep(0.02)
    assert job.proc is not None
    job.proc.send_signal(signum)
    finished = job.wait()
    assert finished.returncode == status, finished.stderr
    assert f"onesided run: received {signal.Signals(signum).name}; stopping 3 ranks" in finished.stderr
    assert_all_gone(job, ["rank0", "rank1", "rank2"])


def test_impostors_are_rejected(launch: LaunchFactory) -> None:
    finished = launch(
        2,
        """
        comm.Barrier()
        if comm.rank == 0:
            probe = "from onesided.comm._world import world; world().Barrier()"
            for name, env in [
                ("bad token", dict(os.environ, ONESIDED_TOKEN="0" * 32)),
                ("duplicate", dict(os.environ)),
                ("bad size", dict(os.environ, ONESIDED_SIZE="3")),
            ]:
                command = [sys.executable, "-c", probe]
                result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=30)
                say(f"{name}: {result.returncode} {result.stderr.strip().splitlines()[-1]}")
        assert comm.allgather(comm.rank) == [0, 1]  # the real ranks are unaffected
        """,
    ).run()
    assert finished.returncode == 0, finished.stderr
    lines = finished.stdout.splitlines()
    assert re.fullmatch(r"bad token: 1 .*WorldError: hello from rank 0 has the wrong token", lines[0]), lines
    assert re.fullmatch(r"duplicate: 1 .*WorldError: rank 0 is already connected", lines[1]), lines
    bad_size = r"bad size: 1 .*WorldError: hello from rank 0 of 3, but this world has 2 ranks"
    assert re.fullmatch(bad_size, lines[2]), lines


def test_program_arguments_pass_through(tmp_path: Path) -> None:
    (tmp_path / "echo_args.py").write_text(
        "import os, sys\nfrom onesided.comm._world import world\n"
        "os.write(1, f'{world().rank} {sys.argv[1:]}\\n'.encode())\n"
    )
    for mode in (["-m", "echo_args"], [str(tmp_path / "echo_args.py")]):
        arguments = ["-n", "5", "--", "--timeout", "x"]
        command = [sys.executable, "-m", "onesided", "run", "-n", "2", *mode, *arguments]
        result = subprocess.run(
            command, env=environment([tmp_path]), capture_output=True, text=True, timeout=JOB_LIMIT
        )
        assert result.returncode == 0, result.stderr
        expected = [f"{rank} {arguments}" for rank in range(2)]
        assert sorted(result.stdout.splitlines()) == expected


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["run", "-n", "2"], "no script (or -m module) to run"),
        (["run", "-n", "0", "x.py"], "must be at least 1"),
        (["run", "x.py"], "required: -n/--np"),
        (["run", "-n", "1", "--timeout", "0", "x.py"], "must be positive"),
        ([], "required: COMMAND"),
    ],
)
def test_usage_errors(arguments: list[str], message: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "onesided", *arguments],
        env=environment(),
        capture_output=True,
        text=True,
        timeout=JOB_LIMIT,
    )
    assert result.returncode == 2
    assert message in result.stderr


def test_missing_script_is_reported() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "onesided", "run", "-n", "2", "/nonexistent/script.py"],
        env=environment(),
        capture_output=True,
        text=True,
        timeout=JOB_LIMIT,
    )
    assert result.returncode == 2  # python's own status for a missing script
    assert re.search(r"onesided run: rank [01] exited with status 2", result.stderr)


def test_world_of_one_without_launcher() -> None:
    comm = comm_from_environment({})
    assert (comm.Get_rank(), comm.Get_size(), comm.rank, comm.size) == (0, 1, 0, 1)
    token = object()
    assert comm.allgather(token) == [token]
    assert comm.bcast(token) is token
    assert comm.gather(token) == [token]
    for _ in range(3):
        comm.Barrier()
        comm.barrier()
    assert repr(comm) == "Comm(rank=0, size=1)"
    with pytest.raises(ValueError):
        comm.bcast(token, root=1)


def test_world_singleton_in_a_plain_process() -> None:
    probe = (
        "from onesided.comm._world import world\n"
        "w = world()\n"
        "assert w is world() and w.Get_size() == 1 and w.Get_rank() == 0\n"
        "assert w.allgather({'a': 1}) == [{'a': 1}]\n"
        "w.Barrier()\n"
        "print('ok')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], env=environment(), capture_output=True, text=True, timeout=JOB_LIMIT
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok\n"


@pytest.mark.parametrize(
    "env",
    [
        {"ONESIDED_RANK": "0"},
        {"ONESIDED_COORD": "127.0.0.1:1", "ONESIDED_RANK": "4", "ONESIDED_SIZE": "4"},
        {"ONESIDED_COORD": "nohost", "ONESIDED_RANK": "0", "ONESIDED_SIZE": "2"},
    ],
    ids=["incomplete", "rank-out-of-range", "bad-address"],
)
def test_bad_launcher_environment_is_an_error(env: dict[str, str]) -> None:
    with pytest.raises(WorldError):
        comm_from_environment(env)


def test_unreachable_coordinator_is_an_error() -> None:
    # Port 1 on loopback refuses connections: the collective must fail, not hang.
    env = {"ONESIDED_COORD": "127.0.0.1:1", "ONESIDED_RANK": "0", "ONESIDED_SIZE": "2"}
    comm = comm_from_environment(env)
    with pytest.raises(WorldError, match="no connection to the onesided coordinator at 127.0.0.1:1"):
        comm.Barrier()
    with pytest.raises(WorldError, match="no connection"):
        comm.allgather(0)  # the world stays broken
