// The interrupt hook (onesided/interrupt.hpp): one process-wide function
// pointer. It is read with acquire and stored with release, so a waiter
// that sees a new hook also sees whatever its setter prepared before.
#include "onesided/interrupt.hpp"

#include <atomic>

#include "onesided/error.hpp"

namespace onesided {
namespace {

std::atomic<InterruptHook> hook{nullptr};
thread_local int deferred = 0;  // open InterruptsDeferred scopes of this thread

}  // namespace

void set_interrupt_hook(InterruptHook h) noexcept { hook.store(h, std::memory_order_release); }

void check_interrupt() {
  if (deferred > 0) return;
  const InterruptHook h = hook.load(std::memory_order_acquire);
  if (h && h()) raise(ErrorCategory::Interrupted, "the wait was interrupted");
}

InterruptsDeferred::InterruptsDeferred() noexcept { ++deferred; }
InterruptsDeferred::~InterruptsDeferred() { --deferred; }

}  // namespace onesided
