"""onesided next to mpi4py's ``MPI.Win``, OSU-style, every figure measured in one run.

Run under MPI; the same communicator serves both libraries::

    mpiexec -n 2 python -m onesided.bench [--quick] [--all] [--plot DIR]
    mpiexec -n N python -m onesided.bench --contended [--quick]     # N = 2, 4, 8
    mpiexec -n 2 python -m onesided.bench --windows [--quick]
    mpiexec -n N python -m onesided.bench --creation [--quick]      # N = 2, 4, 8, 16

On 2 ranks it prints, as markdown tables with the ratio onesided / MPI.Win:

1. latency of 8-byte op + Flush (put, get, accumulate, get_accumulate,
   fetch_and_op, compare_and_swap, and onesided's Rmw INC / Rmw2
   COMP_SWAP_LT), for onesided on its shared-memory path, onesided over
   libfabric shm (``onesided_shared_memory=off``) and ``MPI.Win.Allocate``;
   then lock epochs (Lock + 8-byte put or fetch_and_op + Unlock) on
   Allocate and Create windows beside ``MPI.Win.Allocate``/``Create``;
2. put and get bandwidth from 8 B to 4 MiB (64 ops then one Flush, as OSU's
   put_bw), with a single-process memcpy column for reference;
2b, 2c. (full mode, or ``--only kinds``) put and get bandwidth from 8 B to
   64 MiB on every window kind (Allocate, Create, Allocate_shared,
   Create_dynamic) beside ``MPI.Win`` of the same kind and a single-core
   memcpy, in one run;
3. message rate: 8-byte puts and accumulates, 256 per Flush;
3b. column exchange (a halo's strided put of one column): onesided's
   strided put beside copy-to-contiguous + put and beside ``MPI.Win`` with
   a vector datatype;
3c. notified put (``Put_notify`` + ``Wait_notify``) beside the put + flush
   + flag protocol it replaces, on onesided and on ``MPI.Win``;
4. (full mode only) onesided's atomics by path: native and software, on
   libfabric shm and tcp, shared memory off.

The contended-counter figure (every rank fetch_and_op on rank 0's counter)
needs one job per rank count, so ``--contended`` runs only that table for the
job's size and checks that the final counter equals every op issued; ``--all``
adds it (for 2 ranks) to the 2-rank run and prints the command lines for the
other sizes (the benchmark never starts ranks itself). ``make bench-scale``
runs it on 2, 4 and 8 ranks beside each peer and prints the table across
rank counts (``scale.py``). A job with more ranks than the host has cores
says so: its ranks take turns on the cores.

``--windows`` runs only figure 6 (``_windows.py``): 100 windows of each
kind (onesided and MPI.Win, Allocate and Create) made, used lightly and
freed, with what each window costs in time and holds in the process
(threads, descriptors, /dev/shm files, resident memory); ``make
bench-windows`` runs it beside each peer.

``--creation`` runs only figure 7 (``_creation.py``): the job's first
window, then windows of each kind (Allocate, Create, Allocate_shared,
Create_dynamic) made and freed one after another, onesided and MPI.Win
taking turns on the same communicator, each call's slowest rank; ``make
bench-creation`` runs it on 2, 4, 8 and 16 ranks beside each peer and
prints the table across rank counts (``creation.py``).

Rank 0 is the origin and rank 1 the passive target, and each library gets
the target behaviour it needs at its best: for MPI.Win the target waits
inside MPI_Barrier (MPICH progresses passive-target RMA only inside MPI
calls); for onesided the target naps while testing a non-blocking barrier,
leaving the core to onesided's progress thread on the libfabric path (on a
2-core machine a target spinning in MPI starves that thread; the shared-memory path
needs no target at all). Every figure is the median of several repetitions
after a warm-up. ``--quick`` (``make demo``) shrinks the counts; ``--plot
DIR`` writes latency.png and bandwidth.png (needs matplotlib). Progress goes
to rank 0's stderr. Every table prints each figure's median with its min and
max over the repetitions, ``median [min, max]``, and opens with a
calibration line: a core-to-core ping-pong between ranks 0 and 1 measured
just before it, no MPI involved (``_calibration.py``), so a noisy run shows.
``--json FILE`` also writes the run's summary rows (peers.py: the table
across peers, ``make bench-peers``).

The peer is whatever MPI mpi4py is built against; the run names it. Under
Open MPI 4.1 select its osc/sm component (``mpiexec --mca osc sm``, or
OMPI_MCA_osc=sm): its default on one node, osc/rdma, crashes on
compare-and-swap (open-mpi/ompi#7027), so without osc/sm the MPI.Win
compare_and_swap figures are skipped. ``make bench-openmpi`` runs it so,
with an mpi4py built against Debian's Open MPI; ``make bench-peers`` runs
it against MPICH 5 and Open MPI 5 from their PyPI wheels (osc/sm and
osc/ucx) beside Debian's MPICH.

An MPI wheel that carries its own libfabric.so.1 (Open MPI's, MPICH's) must
be imported before onesided (issue 18): ``tools/bench_peer.py`` imports
``mpi4py.MPI`` and then runs this module; the heading names the libfabric
the process runs on.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ._common import Figure, Progress, Settings, Spread

__all__ = ["main"]

CONTENDED_SIZES = (2, 4, 8)


def figures() -> list[Figure]:
    """The 2-rank figures, in the order printed: each measured, then printed
    under its calibration line. A new figure is one entry here."""
    from . import _figures as fig
    from ._columns import column_exchange, column_exchange_text
    from ._kinds import kinds_bandwidth, kinds_bandwidth_text
    from ._notify import notified_put, notified_put_text
    from ._paths import paths, paths_text

    return [
        Figure("latency", fig.latency, fig.latency_text, fig.latency_summary),
        Figure("epochs", fig.epoch_latency, fig.epoch_latency_text, fig.epoch_latency_summary),
        Figure("bandwidth", fig.bandwidth, fig.bandwidth_text),
        Figure("kinds", kinds_bandwidth, kinds_bandwidth_text, full_only=True),
        Figure("rate", fig.message_rate, fig.message_rate_text, fig.message_rate_summary),
        Figure("columns", column_exchange, column_exchange_text),
        Figure("notified", notified_put, notified_put_text),
        Figure("paths", paths, paths_text, full_only=True),
    ]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m onesided.bench",
                                     description="onesided next to mpi4py's MPI.Win, in one run (see docs/performance.md)")
    parser.add_argument("--quick", action="store_true", help="fewer iterations and sizes (the demo, < 60 s)")
    parser.add_argument("--iters", type=int, default=None, help="latency: ops per repetition (default 2000, quick 300)")
    parser.add_argument("--reps", type=int, default=None, help="repetitions per figure (default 15, quick 5)")
    parser.add_argument("--only", metavar="FIGURES", default=None,
                        help="comma-separated 2-rank figures to run (latency, epochs, bandwidth, kinds, rate, "
                             "columns, notified, paths); default: all")
    parser.add_argument("--contended", action="store_true",
                        help="only the contended-counter table, for this job's number of ranks")
    parser.add_argument("--windows", action="store_true",
                        help="only the many-windows tables (100 windows of each kind, used lightly)")
    parser.add_argument("--creation", action="store_true",
                        help="only the window-creation table (first window, later windows, Free), any number of ranks")
    parser.add_argument("--all", action="store_true",
                        help="also the contended-counter table for 2 ranks (other sizes need their own jobs)")
    parser.add_argument("--plot", metavar="DIR", default=None,
                        help="write latency.png and bandwidth.png into DIR (needs matplotlib)")
    parser.add_argument("--json", metavar="FILE", default=None,
                        help="also write the run's summary rows as JSON (for python -m onesided.bench.peers)")
    parser.add_argument("--label", default=None,
                        help="the peer's name in the table across peers (default: the MPI library's version)")
    return parser


class _Run:
    """What rank 0 gathers for --json: the run's identity, each table's
    calibration and summary rows."""

    def __init__(self, header: dict[str, Any]) -> None:
        self.header = header
        self.figures: list[dict[str, Any]] = []

    def add(self, title: str, calibration: Spread | None, rows: list[Any]) -> None:
        def triple(v: Any) -> list[float] | None:
            if v is None:
                return None
            return [float(v), v.lo, v.hi] if isinstance(v, Spread) else [float(v)] * 3

        self.figures.append({"title": title, "calibration": triple(calibration),
                             "rows": [{"row": name, "unit": unit, "onesided": triple(ours), "peer": triple(theirs),
                                       "higher_is_better": higher} for name, unit, ours, theirs, higher in rows]})

    def write(self, path: str) -> None:
        import json

        with open(path, "w") as f:
            json.dump({**self.header, "figures": self.figures}, f, indent=1)
            f.write("\n")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    settings = Settings.make(args.quick, args.iters, args.reps)

    import mpi4py
    from mpi4py import MPI

    import onesided

    from . import _figures as fig
    from ._peer import libfabric_in_process
    from ._plot import have_matplotlib, write_charts

    comm = MPI.COMM_WORLD
    rank0 = comm.rank == 0
    progress = Progress(comm.rank)

    def say(text: str) -> None:
        if rank0:
            print(text + "\n", flush=True)

    if args.plot and not args.contended and not have_matplotlib():
        if rank0:
            print("--plot needs matplotlib, which is not installed: pip install matplotlib", file=sys.stderr)
        return 1
    version, peer = fig.mpi_version(MPI), fig.mpi_peer(MPI)
    mode = "quick" if settings.quick else "full"
    libfabric = libfabric_in_process()
    say(f"## onesided {onesided.__version__} benchmark ({mode}), {comm.size} ranks on one host; peer: "
        f"mpi4py {mpi4py.__version__} MPI.Win on {version}")
    say(f"libfabric in this process: {libfabric}")
    note = fig.ompi_note(MPI)
    if note:
        say(note)
    run = _Run({"label": args.label or peer, "peer": peer, "mpi": version, "mpi4py": mpi4py.__version__,
                "onesided": onesided.__version__, "mode": mode, "ranks": comm.size, "cores": os.cpu_count(),
                "reps": settings.reps, "libfabric": libfabric})

    def finish(status: int) -> int:
        if args.json and rank0:
            run.write(args.json)
        return status

    checked = checked_figures()
    if args.creation:
        # First: the figure times the job's first window.
        status, _ = _run_figure(checked["creation"], comm, MPI, onesided, settings, progress, say, run, peer)
        progress("done")
        return finish(status)

    if args.contended or args.windows:
        if args.plot:
            say("(--plot is ignored with --contended and --windows: the charts come from the 2-rank run)")
        if args.windows and comm.size < 2:
            say("--windows needs 2 ranks or more: rank 0 is the origin, rank 1 the target")
            return 2
        status = 0
        if args.contended:
            status, _ = _run_figure(checked["contended"], comm, MPI, onesided, settings, progress, say, run, peer)
        if args.windows:
            status = max(status, _run_figure(checked["windows"], comm, MPI, onesided, settings, progress, say, run,
                                             peer)[0])
        return finish(status)

    if comm.size != 2:
        say("run on exactly 2 ranks: mpiexec -n 2 python -m onesided.bench "
            "(or any number of ranks with --contended)")
        return 2

    status = 0
    results: dict[str, Any] = {}
    only = None if args.only is None else set(args.only.split(","))
    unknown = (only or set()) - {f.key for f in figures()}
    if unknown:
        say(f"--only: no figure {', '.join(sorted(unknown))}; the figures: {', '.join(f.key for f in figures())}")
        return 2
    for figure in figures():
        if (figure.full_only and settings.quick and not only) or (only and figure.key not in only):
            continue
        _, results[figure.key] = _run_figure(figure, comm, MPI, onesided, settings, progress, say, run, peer)
    if args.all:
        status, _ = _run_figure(checked["contended"], comm, MPI, onesided, settings, progress, say, run, peer)
    flag = " --quick" if settings.quick else ""
    mca = " --mca osc sm" if fig.open_mpi_41(MPI) else ""
    say("Contended-counter throughput needs one job per rank count (the benchmark starts no ranks itself):\n\n"
        + "\n".join(f"    mpiexec{mca} -n {n} python -m onesided.bench --contended{flag}" for n in CONTENDED_SIZES)
        + f"\n\nand so does the many-windows figure:\n\n    mpiexec{mca} -n 2 python -m onesided.bench --windows{flag}")
    if args.plot and rank0:
        title = f"onesided vs mpi4py MPI.Win on {peer}"
        for path in write_charts(args.plot, results.get("latency"), results.get("bandwidth"), title):
            say(f"chart: {path}")
    progress("done")
    return finish(status)


def checked_figures() -> dict[str, Figure]:
    """The figures that run in jobs of their own (``--contended``,
    ``--windows``, ``--creation``), each checking what it measured."""
    from ._contended import contended, contended_ok, contended_summary, contended_text
    from ._creation import creation, creation_ok, creation_summary, creation_text
    from ._windows import many_windows, many_windows_ok, many_windows_summary, many_windows_text

    return {
        "contended": Figure("contended", contended, contended_text, contended_summary, ok=contended_ok,
                            mismatch="contended counter: MISMATCH, the final counter is not the number of ops issued"),
        "windows": Figure("windows", many_windows, many_windows_text, many_windows_summary, ok=many_windows_ok,
                          mismatch="many windows: MISMATCH, the counters do not add up to the epochs issued"),
        "creation": Figure("creation", creation, creation_text, creation_summary, ok=creation_ok,
                           mismatch="creation: onesided failed to make a kind of window"),
    }


def _run_figure(figure: Figure, comm: Any, MPI: Any, onesided: Any, settings: Settings, progress: Progress,
                say: Any, run: _Run, peer: str) -> tuple[int, Any]:
    """Measures `figure` after a calibration; at rank 0 prints it under the
    calibration line and adds it to the JSON run. Returns (1 at every rank
    when its check failed, else 0; the result at rank 0)."""
    from ._calibration import pingpong, with_calibration

    calibration = pingpong(comm, MPI, settings)
    res = figure.measure(comm, MPI, onesided, settings, progress)
    ok = True
    if comm.rank == 0:
        text = figure.text(res, settings, peer)
        say(with_calibration(text, calibration))
        run.add(text.partition("\n")[0].removeprefix("### "), calibration, figure.summary(res) if figure.summary else [])
        ok = figure.ok is None or figure.ok(res)
        if not ok:
            say(figure.mismatch)
    if figure.ok is not None:
        ok = comm.bcast(ok, root=0)
    return (0 if ok else 1), res
