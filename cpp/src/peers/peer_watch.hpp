// Waiting for what only a peer can bring (an acknowledgement, a lock, a
// reply): poll progress until done() holds and every 100 ms run check(),
// which raises if a peer the wait depends on has died, so such a wait ends
// in an error instead of never. Window waits (PeerTable::wait) and
// request waits (Request::wait) share it. With the peer table, below
// everything that waits for a peer.
#pragma once

#include <chrono>
#include <thread>

#include "transport/progress.hpp"

namespace onesided::detail {

inline constexpr std::chrono::milliseconds kPeerCheck{100};

// The 100 ms start at the wait's 64th round, not at its call: a flush of
// one operation on shm ends within a few dozen rounds, and a clock read at
// every call (80 ns in the development VM) was a visible part of its cost.
template <class Done, class Check>
void wait_watching(ProgressEngine& progress, Done&& done, Check&& check) {
  using clock = std::chrono::steady_clock;
  clock::time_point next{};  // unset until the first look at the clock
  unsigned n = 0;
  progress.wait([&] {
    if (done()) return true;
    // The clock is read every 64th round only: rounds are short.
    if (++n % 64 == 0) {
      const auto now = clock::now();
      if (next == clock::time_point{}) {
        next = now + kPeerCheck;
      } else if (now > next) {
        check();
        next = clock::now() + kPeerCheck;
      }
    }
    return false;
  });
}

// A provider error is most often a peer's death, and the provider may see
// its own connection reset a moment before check() sees the liveness
// connection's (two connections, two resets, in either order). So a failed
// operation asks check() for up to kCauseGrace before it raises the
// provider's words, which name no rank: only error paths pay it.
inline constexpr std::chrono::milliseconds kCauseGrace{300};

template <class Check>
void name_the_cause(Check&& check) {
  const auto end = std::chrono::steady_clock::now() + kCauseGrace;
  for (;;) {
    check();  // raises naming the dead rank
    if (std::chrono::steady_clock::now() >= end) return;
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
  }
}

}  // namespace onesided::detail
