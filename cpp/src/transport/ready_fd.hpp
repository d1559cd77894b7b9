// The file descriptor an event loop waits on for awaited requests: one
// eventfd per process, not one per request. A request that an event loop
// awaits is armed (request_state.hpp); its last completion, on whichever
// thread (usually the progress engine's background one) writes 1 to the
// eventfd, and the loop's reader (python/onesided/window/_aio.py) drains it and
// looks at the requests it awaits. Requests nobody awaits never touch it,
// so the paths pay nothing for it.
//
// Who writes what: the count of awaited requests is one relaxed atomic
// (a hint for the engine's schedule, never a condition of correctness);
// fd_ is set once per process generation under a mutex
// (a child made by fork() gets its own: the parent's eventfd would carry
// the parent's completions); ring() only reads it.
#pragma once

namespace onesided::detail {

class ReadyFd {
 public:
  // The eventfd (non-blocking, close-on-exec), made on first use.
  static int fd();
  // Adds 1 to the eventfd's counter: wakes whoever waits on it. Called
  // only after fd() (arm() calls it first), from any thread.
  static void ring();
  // Requests armed and not yet complete, in this process: while there are
  // any, the progress engine stays hot (progress.cpp), since an awaiting
  // event loop does not poll and would otherwise wait out the engine's naps.
  static void awaited(int delta);
  static bool any_awaited();
};

}  // namespace onesided::detail
