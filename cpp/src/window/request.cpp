// Request: waits for the transfers of one operation (request_state.hpp),
// watching the target's process as window waits watch their peers
// (peers/peer_watch.hpp, peers/liveness.hpp: by pid on this host, by a kept
// TCP connection on another): an operation whose target died never completes.
#include "transport/endpoint.hpp"
#include "peers/liveness.hpp"
#include "onesided/error.hpp"
#include "onesided/request.hpp"
#include "paths/request_state.hpp"
#include "peers/peer_watch.hpp"

#include <chrono>
#include <cstdint>
#include <string>

namespace onesided {

void Request::check_target() {
  if (!target_life_) return;
  if (const auto why = target_life_->gone())
    raise(ErrorCategory::Transport,
          "rank " + std::to_string(target_) + " " + *why + "; the request's operation cannot complete");
}

void Request::wait() {
  if (!state_) return;
  auto& s = *state_;
  if (s.release_held) s.release_held();
  auto done = [&] { return s.done(); };
  if (target_life_)
    detail::wait_watching(endpoint_->progress(), done, [this] { check_target(); });
  else
    endpoint_->progress().wait(done);
  if (s.failed) {
    if (target_life_) detail::name_the_cause([this] { check_target(); });  // a dead target: name it and its host
    std::lock_guard lk(s.mutex);
    raise(ErrorCategory::Transport, "the operation failed: " + s.error);
  }
  // Seen complete: from here on the race checker may count it as ordering.
  if (s.stamp_wait.load(std::memory_order_relaxed)) {
    const auto now = std::chrono::steady_clock::now().time_since_epoch();
    s.waited_at.store(static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count()),
                      std::memory_order_release);
  }
}

bool Request::test() {
  if (!state_) return true;
  if (state_->release_held) state_->release_held();
  if (!state_->done()) endpoint_->progress().poll();
  if (!state_->done()) {
    if (target_life_) {
      const auto now = std::chrono::steady_clock::now();
      if (now >= next_check_) {
        next_check_ = now + detail::kPeerCheck;
        check_target();
      }
    }
    return false;
  }
  wait();  // raises if it failed
  return true;
}

bool Request::done() const { return !state_ || state_->done(); }

bool Request::arm() {
  if (!state_) return false;
  if (state_->release_held) state_->release_held();
  return state_->arm();
}

int Request::ready_fd() { return detail::ReadyFd::fd(); }

}  // namespace onesided
