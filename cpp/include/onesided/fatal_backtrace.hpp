// Native frames of a thread that faults. A segfault in a thread the
// interpreter does not know (a progress thread, a library's own thread)
// shows in Python's faulthandler only as the Python threads' stacks, none
// of which faulted; report_fatal_signals makes the faulting thread print
// its own native frames (and its id and name) to stderr first.
//
// Guarantees, once armed:
// * On SIGSEGV, SIGBUS, SIGILL or SIGFPE the faulting thread writes a
//   header and its frames (glibc's backtrace_symbols_fd: object, offset)
//   to stderr, with async-signal-safe calls only (backtrace() is called
//   once when armed, so the signal handler loads nothing).
// * Then the handler that was there before (Python's faulthandler, or the
//   default action) takes the signal as if this one had never been: the
//   process still dies of it, and the exit status names it.
// * Arming twice is arming once.
#pragma once

namespace onesided {

void report_fatal_signals();

}  // namespace onesided
