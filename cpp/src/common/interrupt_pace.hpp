// How a wait loop calls check_interrupt (onesided/interrupt.hpp) without
// slowing down: a wait that ends at once never reaches it, and the loop
// calls it every so many rounds, where it reads the clock and asks the
// hook only once kInterruptCheck has passed since the wait's first call
// (or the last check). A wait of microseconds never pays for the hook.
#pragma once

#include <chrono>

#include "onesided/interrupt.hpp"

namespace onesided::detail {

class InterruptPace {
 public:
  // The loop calls this every round or every N rounds; a call costs a
  // clock read, a check every kInterruptCheck.
  void operator()() {
    const auto now = std::chrono::steady_clock::now();
    if (next_ == std::chrono::steady_clock::time_point{}) {
      next_ = now + kInterruptCheck;
    } else if (now >= next_) {
      check_interrupt();
      next_ = now + kInterruptCheck;
    }
  }

 private:
  std::chrono::steady_clock::time_point next_{};
};

}  // namespace onesided::detail
