// Interrupting a wait. Every call of the core that can block (a flush, a
// lock, a PSCW or notification wait, a request's wait) asks a process-wide
// hook, set by whoever embeds the core, whether to give up: at most every
// kInterruptCheck of waiting, never in a wait that is over at once. When the
// hook says yes the wait throws Error(ErrorCategory::Interrupted), which
// unwinds the call; docs/semantics.md says what state each call leaves.
//
// The Python binding sets a hook that runs the interpreter's signal
// handlers (so Ctrl-C raises KeyboardInterrupt out of a wait); a C++
// program may set its own, e.g. one that reads a flag its SIGINT handler
// sets. Without a hook nothing is ever interrupted.
#pragma once

#include <chrono>

namespace onesided {

// Returns true to end the wait that called it. Called from the waiting
// thread, never from a signal handler, so it may take locks (the GIL).
using InterruptHook = bool (*)();

// Replaces the hook (nullptr: waits are never interrupted). Safe to call
// while other threads wait: they see the new hook at their next check.
void set_interrupt_hook(InterruptHook hook) noexcept;

// How long a wait runs between two calls of the hook, at most (plus one
// round of the wait, which is microseconds, or a bounded sleep of 10 ms).
inline constexpr std::chrono::milliseconds kInterruptCheck{50};

// Calls the hook (if any); throws Error(Interrupted) when it asks to stop.
// Waits call it through InterruptPace; a C++ program's own wait loop over
// onesided's non-blocking calls (Request::test, Window::test) may too.
void check_interrupt();

// Inside such a scope this thread's waits are not interrupted: for a wait
// whose abandonment would leave a reply with nowhere to go (a round trip
// whose reply lands in the waiting frame). Nests.
class InterruptsDeferred {
 public:
  InterruptsDeferred() noexcept;
  ~InterruptsDeferred();
  InterruptsDeferred(const InterruptsDeferred&) = delete;
  InterruptsDeferred& operator=(const InterruptsDeferred&) = delete;
};

}  // namespace onesided
