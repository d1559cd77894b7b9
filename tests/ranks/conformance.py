"""Run the conformance cases (conformance_cases/) with MPI.Win and with
onesided.Window in one 2-rank job, and print one line per case on rank 0:

    CASE <name> mpi=<repr> onesided=<repr> SAME|DIFF

A repr is the case's result, or ``per-rank[...]`` when the ranks' results
differ; ``mpi=documented:...`` marks the few cases compared with mpi4py's
documented result instead of an MPI.Win run (conformance_cases.DOCUMENTED). SAME when the onesided result matches the mpi4py one on every rank
(see conformance_cases.match: an MPI.Exception is matched by any
onesided.Error, other exceptions by their builtin class).

Usage: mpiexec -n 2 python -m mpi4py conformance.py [CASE ...]

Both ranks run every case with both classes in the same order and meet in an
allgather after each, so one failing case cannot leave the ranks in
different collective calls. A watchdog ends the job (exit 3, after printing
``HANG <case> <class>``) if a case outlives CASE_DEADLINE seconds, so that a
hang costs one deadline and names its case, not the driver's whole timeout.
"""

from __future__ import annotations

import os
import sys
import threading
import time

import numpy as np
from mpi4py import MPI

import conformance_cases as cc
import onesided

CASE_DEADLINE = 25.0

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
if comm.Get_size() != 2:
    raise SystemExit("conformance.py runs on exactly 2 ranks")


class Watchdog:
    """Ends the process if the armed case runs past its deadline."""

    def __init__(self) -> None:
        self._timer: threading.Timer | None = None

    def arm(self, name: str, label: str) -> None:
        self._timer = threading.Timer(CASE_DEADLINE, self._expire, (name, label))
        self._timer.daemon = True
        self._timer.start()

    def disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    @staticmethod
    def _expire(name: str, label: str) -> None:
        print(f"HANG {name} {label} rank {rank}", flush=True)
        sys.stderr.flush()
        os._exit(3)


def per_rank_repr(values: list[object]) -> str:
    if all(cc.match(values[0], v) and repr(v) == repr(values[0]) for v in values[1:]):
        text = repr(values[0])
    else:
        text = "per-rank" + repr(values)
    return " ".join(text.split())


def main() -> None:
    names = sys.argv[1:] or list(cc.CASES)
    unknown = [n for n in names if n not in cc.CASES]
    if unknown:
        raise SystemExit(f"unknown cases: {unknown}")
    watchdog = Watchdog()
    classes = (("mpi", MPI.Win), ("onesided", onesided.Window))
    start = time.monotonic()
    for name in names:
        fn = cc.CASES[name]
        gathered = {}
        for label, Win in classes:
            if label == "mpi" and name in cc.DOCUMENTED:
                # MPI.Win is not a usable reference here (see conformance_cases):
                # mpi4py's documented result stands in for it.
                gathered[label] = [cc.DOCUMENTED[name]] * comm.Get_size()
                continue
            watchdog.arm(name, label)
            try:
                value = cc.norm(fn(Win, MPI, comm, np))
            except Exception as e:  # noqa: BLE001 - every exception is a result
                value = cc.Raised.of(e)
            watchdog.disarm()
            cc.KEEP.clear()
            gathered[label] = comm.allgather(value)  # also keeps the ranks in step
        if rank == 0:
            mpi, ours = gathered["mpi"], gathered["onesided"]
            same = all(cc.match(m, o) for m, o in zip(mpi, ours))
            reference = ("documented:" if name in cc.DOCUMENTED else "") + per_rank_repr(mpi)
            print(f"CASE {name} mpi={reference} onesided={per_rank_repr(ours)} "
                  f"{'SAME' if same else 'DIFF'}", flush=True)
    comm.Barrier()
    if rank == 0:
        print(f"DONE {len(names)} cases in {time.monotonic() - start:.1f} s", flush=True)


main()
