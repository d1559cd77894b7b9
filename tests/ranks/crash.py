"""Rank 1 dies of a signal after the window exists; rank 0 waits in a fence
until whatever started the job stops it. tests/test_crash_signals.py runs it
in a scratch working directory and checks that no crash-dump file appears
there and that the job reports the signal.

Usage: crash.py SIGNAL [preloaded]. SIGNAL is a name (SIGSEGV, SIGKILL, ...).
"preloaded": libfabric (and with it libinfinipath, whose constructor hooks
the crash signals unless IPATH_NO_BACKTRACE is set) is loaded before
onesided is imported, with the variable unset, as another library might.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

signum = signal.Signals[sys.argv[1]]
if sys.argv[2:] == ["preloaded"]:
    os.environ.pop("IPATH_NO_BACKTRACE", None)  # the launcher's own import set it
    ctypes.CDLL("libfabric.so.1")

import onesided  # noqa: E402
from harness import comm as test_comm  # noqa: E402
from harness import info  # noqa: E402

comm = test_comm()
win = onesided.Window.Allocate(8, info=info(), comm=comm)
win.Fence()
if comm.Get_rank() == 1:
    print(f"RANK 1 SENDS ITSELF {signum.name}", flush=True)
    os.kill(os.getpid(), signum)
win.Fence()
print("finished without error", flush=True)
