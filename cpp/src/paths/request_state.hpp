// What a Request tracks: the transfers of one operation still in flight.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <string>

namespace onesided::detail {

struct RequestState {
  std::atomic<int> pending{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::string error;
  // Nasty mode holds operations back: Wait and Test release them first.
  std::function<void()> release_held;

  void complete(const char* err) {
    if (err) {
      std::lock_guard lk(mutex);
      if (error.empty()) error = err;
      failed = true;
    }
    pending.fetch_sub(1, std::memory_order_release);
  }
};

}  // namespace onesided::detail
