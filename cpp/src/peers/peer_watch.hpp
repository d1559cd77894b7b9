// Waiting for what only a peer can bring (an acknowledgement, a lock, a
// reply): poll progress until done() holds and every 100 ms run check(),
// which raises if a peer the wait depends on has died, so such a wait ends
// in an error instead of never. Window waits (PeerTable::wait) and
// request waits (Request::wait) share it. With the peer table, below
// everything that waits for a peer.
#pragma once

#include <chrono>

#include "transport/progress.hpp"

namespace onesided::detail {

inline constexpr std::chrono::milliseconds kPeerCheck{100};

template <class Done, class Check>
void wait_watching(ProgressEngine& progress, Done&& done, Check&& check) {
  auto next = std::chrono::steady_clock::now() + kPeerCheck;
  unsigned n = 0;
  progress.wait([&] {
    if (done()) return true;
    // The clock is read every 64th round only: rounds are short.
    if (++n % 64 == 0 && std::chrono::steady_clock::now() > next) {
      check();
      next = std::chrono::steady_clock::now() + kPeerCheck;
    }
    return false;
  });
}

}  // namespace onesided::detail
