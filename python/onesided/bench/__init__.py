"""onesided next to mpi4py's ``MPI.Win``, OSU-style, every figure measured in one run.

Run under MPI; the same communicator serves both libraries::

    mpiexec -n 2 python -m onesided.bench [--quick] [--all] [--plot DIR]
    mpiexec -n N python -m onesided.bench --contended [--quick]     # N = 2, 4, 8

On 2 ranks it prints, as markdown tables with the ratio onesided / MPI.Win:

1. latency of 8-byte op + Flush (put, get, accumulate, get_accumulate,
   fetch_and_op, compare_and_swap, and onesided's Rmw INC / Rmw2
   COMP_SWAP_LT), for onesided on its shared-memory path, onesided over
   libfabric shm (``onesided_shared_memory=off``) and ``MPI.Win.Allocate``;
   then lock epochs (Lock + 8-byte put or fetch_and_op + Unlock) on
   Allocate and Create windows beside ``MPI.Win.Allocate``/``Create``;
2. put and get bandwidth from 8 B to 4 MiB (64 ops then one Flush, as OSU's
   put_bw), with a single-process memcpy column for reference;
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
other sizes (the benchmark never starts ranks itself).

Rank 0 is the origin and rank 1 the passive target, and each library gets
the target behaviour it needs at its best: for MPI.Win the target waits
inside MPI_Barrier (MPICH progresses passive-target RMA only inside MPI
calls); for onesided the target naps while testing a non-blocking barrier,
leaving the core to onesided's progress thread on the libfabric path (on a
2-core machine a target spinning in MPI starves that thread; the shared-memory path
needs no target at all). Every figure is the median of several repetitions
after a warm-up. ``--quick`` (``make demo``) shrinks the counts; ``--plot
DIR`` writes latency.png and bandwidth.png (needs matplotlib). Progress goes
to rank 0's stderr.

The peer is whatever MPI mpi4py is built against; the run names it. Under
Open MPI 4.1 select its osc/sm component (``mpiexec --mca osc sm``, or
OMPI_MCA_osc=sm): its default on one node, osc/rdma, crashes on
compare-and-swap (open-mpi/ompi#7027), so without osc/sm the MPI.Win
compare_and_swap figures are skipped. ``make bench-openmpi`` runs it so,
with an mpi4py built against Debian's Open MPI.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ._common import Progress, Settings

__all__ = ["main"]

CONTENDED_SIZES = (2, 4, 8)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m onesided.bench",
                                     description="onesided next to mpi4py's MPI.Win, in one run (see docs/performance.md)")
    parser.add_argument("--quick", action="store_true", help="fewer iterations and sizes (the demo, < 60 s)")
    parser.add_argument("--iters", type=int, default=None, help="latency: ops per repetition (default 2000, quick 500)")
    parser.add_argument("--reps", type=int, default=None, help="repetitions per figure (default 5, quick 3)")
    parser.add_argument("--contended", action="store_true",
                        help="only the contended-counter table, for this job's number of ranks")
    parser.add_argument("--all", action="store_true",
                        help="also the contended-counter table for 2 ranks (other sizes need their own jobs)")
    parser.add_argument("--plot", metavar="DIR", default=None,
                        help="write latency.png and bandwidth.png into DIR (needs matplotlib)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    settings = Settings.make(args.quick, args.iters, args.reps)

    import mpi4py
    from mpi4py import MPI

    import onesided

    from . import _figures as fig
    from ._columns import column_exchange, column_exchange_text
    from ._notify import notified_put, notified_put_text
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
    say(f"## onesided {onesided.__version__} benchmark ({mode}), {comm.size} ranks on one host; peer: "
        f"mpi4py {mpi4py.__version__} MPI.Win on {version}")
    note = fig.ompi_note(MPI)
    if note:
        say(note)

    if args.contended:
        if args.plot:
            say("(--plot is ignored with --contended: the charts come from the 2-rank run)")
        return _contended(comm, MPI, onesided, settings, progress, say)

    if comm.size != 2:
        say("run on exactly 2 ranks: mpiexec -n 2 python -m onesided.bench "
            "(or any number of ranks with --contended)")
        return 2

    status = 0
    lat = fig.latency(comm, MPI, onesided, settings, progress)
    if rank0:
        say(fig.latency_text(lat, settings, peer))
    epochs = fig.epoch_latency(comm, MPI, onesided, settings, progress)
    if rank0:
        say(fig.epoch_latency_text(epochs, settings, peer))
    bw = fig.bandwidth(comm, MPI, onesided, settings, progress)
    if rank0:
        say(fig.bandwidth_text(bw, settings))
    rate = fig.message_rate(comm, MPI, onesided, settings, progress)
    if rank0:
        say(fig.message_rate_text(rate, settings))
    columns = column_exchange(comm, MPI, onesided, settings, progress)
    if rank0:
        say(column_exchange_text(columns, settings))
    notified = notified_put(comm, MPI, onesided, settings, progress)
    if rank0:
        say(notified_put_text(notified, settings))
    if args.all:
        status = _contended(comm, MPI, onesided, settings, progress, say)
    if not settings.quick:
        paths = fig.paths(comm, onesided, settings, progress)
        if rank0:
            say(fig.paths_text(paths, settings))
    flag = " --quick" if settings.quick else ""
    mca = " --mca osc sm" if fig.open_mpi_41(MPI) else ""
    say("Contended-counter throughput needs one job per rank count (the benchmark starts no ranks itself):\n\n"
        + "\n".join(f"    mpiexec{mca} -n {n} python -m onesided.bench --contended{flag}" for n in CONTENDED_SIZES))
    if args.plot and rank0:
        title = f"onesided vs mpi4py MPI.Win on {peer}"
        for path in write_charts(args.plot, lat, bw, title):
            say(f"chart: {path}")
    progress("done")
    return status


def _contended(comm: Any, MPI: Any, onesided: Any, settings: Settings, progress: Progress, say: Any) -> int:
    from . import _figures as fig

    res = fig.contended(comm, MPI, onesided, settings, progress)
    ok = True
    if comm.rank == 0:
        say(fig.contended_text(res, settings))
        ok = fig.contended_ok(res)
        if not ok:
            say("contended counter: MISMATCH, the final counter is not the number of ops issued")
    ok = comm.bcast(ok, root=0)
    return 0 if ok else 1
