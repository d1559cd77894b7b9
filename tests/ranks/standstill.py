"""When a rank stands inside a blocking call: what tests that signal a rank
"while it waits in X" wait for before sending, so that the signal lands in
the wait and not on the way to it."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable


def say(line: str) -> None:
    """Write ``line`` and its newline to stdout in one write(2): with
    PYTHONUNBUFFERED, print() writes the newline apart, and a launcher that
    merges ranks' output (MPICH's Hydra) may put another rank's line between."""
    sys.stdout.flush()
    os.write(1, (line + "\n").encode())


def ready(on_inside: Callable[[], None] | None = None) -> None:
    """Print READY (and the pid) now; INSIDE once the main thread is past the
    caller's current line and has stood still inside one call for 20 ms:
    waiting in C with the GIL released, or in a wait loop that sleeps. Then
    call ``on_inside`` too, if given (where stdout does not reach the test)."""
    say(f"READY {os.getpid()}")
    script, line = sys._getframe(1), sys._getframe(1).f_lineno
    main = threading.main_thread().ident

    def watch() -> None:
        seen = None
        while True:
            top = sys._current_frames().get(main)
            now = (id(top), top.f_lasti if top else None, script.f_lineno)
            if script.f_lineno > line and now == seen:
                say("INSIDE")
                if on_inside is not None:
                    on_inside()
                return
            seen = now
            time.sleep(0.02)

    threading.Thread(target=watch, daemon=True).start()
