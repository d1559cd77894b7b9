"""Keep a crashing rank's signal visible and its working directory clean.

Debian's libfabric links its psm provider, which pulls in libinfinipath.
That library's constructor (run when libfabric is loaded, i.e. when
onesided's core is imported) installs handlers for SIGSEGV, SIGBUS, SIGILL,
SIGABRT, SIGINT and SIGTERM that write ``<prog>.80s-<pid>,<host>.btr`` into
the current directory and call ``exit(1)``: a segfault, an abort, Ctrl-C or
the launcher's SIGTERM then looks like "exit status 1" and leaves a file in
the user's directory. The constructor skips this when ``IPATH_NO_BACKTRACE``
is set (Open MPI sets it for the same reason); libpsm2's equivalent is
opt-in (``HFI_BACKTRACE``) and needs nothing.

Guarantees, once :func:`keep_signals_visible` has run (the package does so
before loading its core):

* ``IPATH_NO_BACKTRACE=1`` is in the environment unless the user set it,
  so this process and everything it starts (ranks, under any launcher that
  passes the environment on) keeps the default signal actions.
* If libinfinipath was already loaded (by another library, before onesided)
  with the variable unset, each of those six signals whose handler is
  libinfinipath's gets back the handler Python knows of (its SIGINT handler,
  SIG_DFL for the others). Handlers anyone else installed are left alone.
"""

from __future__ import annotations

import ctypes
import os
import signal
import threading

_VARIABLE = "IPATH_NO_BACKTRACE"
_HIJACKED = (signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGABRT, signal.SIGINT, signal.SIGTERM)
_LIBRARY = "libinfinipath.so"


def _library_ranges() -> list[tuple[int, int]]:
    """Address ranges libinfinipath is mapped at in this process (none if not loaded)."""
    ranges = []
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split()
                if len(fields) >= 6 and _LIBRARY in os.path.basename(fields[5]):
                    start, end = fields[0].split("-")
                    ranges.append((int(start, 16), int(end, 16)))
    except OSError:
        pass
    return ranges


def _handler_address(signum: int, libc: ctypes.CDLL) -> int | None:
    """The address of signum's current handler, from sigaction(2).

    glibc's struct sigaction starts with the handler on the architectures
    Debian ships (the MIPS layout differs; there the answer is only used to
    compare against libinfinipath's ranges, so a wrong read restores nothing).
    """
    action = ctypes.create_string_buffer(512)  # larger than any struct sigaction
    if libc.sigaction(signum, None, action) != 0:
        return None
    return ctypes.c_void_p.from_buffer(action).value


def _restore_hijacked_handlers(ranges: list[tuple[int, int]]) -> None:
    if threading.current_thread() is not threading.main_thread():
        return  # signal.signal works only there; the environment still covers children
    libc = ctypes.CDLL(None, use_errno=True)
    for signum in _HIJACKED:
        address = _handler_address(signum, libc)
        if address is None or not any(start <= address < end for start, end in ranges):
            continue
        known = signal.getsignal(signum)
        signal.signal(signum, known if known is not None else signal.SIG_DFL)


def keep_signals_visible() -> None:
    """Stop libinfinipath from turning signals into exit(1) plus a .btr file."""
    if _VARIABLE in os.environ:
        return  # the user chose
    os.environ[_VARIABLE] = "1"
    ranges = _library_ranges()
    if ranges:
        _restore_hijacked_handlers(ranges)
