// Request: waits for the transfers of one operation (request_state.hpp).
#include "transport/endpoint.hpp"
#include "onesided/error.hpp"
#include "onesided/request.hpp"
#include "paths/request_state.hpp"

namespace onesided {

void Request::wait() {
  if (!state_) return;
  auto& s = *state_;
  if (s.release_held) s.release_held();
  endpoint_->progress().wait([&] { return s.pending.load(std::memory_order_acquire) == 0; });
  if (s.failed) {
    std::lock_guard lk(s.mutex);
    raise(ErrorCategory::Transport, "the operation failed: " + s.error);
  }
}

bool Request::test() {
  if (!state_) return true;
  if (state_->release_held) state_->release_held();
  if (state_->pending.load(std::memory_order_acquire) != 0) endpoint_->progress().poll();
  if (state_->pending.load(std::memory_order_acquire) != 0) return false;
  wait();  // raises if it failed
  return true;
}

}  // namespace onesided
