// What a Request tracks: the transfers of one operation still in flight.
//
// Who writes what: `pending` counts transfers in flight (paths add, complete()
// subtracts, any thread) and carries kAwaited, set once by arm() when an
// event loop awaits the request. One variable holds both so that arm() and
// the last completion are read-modify-writes of the same atomic: exactly one
// of them sees the other (arm sees the count at 0 and reports "done", or the
// completion sees kAwaited and rings the ready fd), never neither. The
// error is written under `mutex` before the subtraction that releases it.
// `waited_at` is written by Request::wait() (which Test calls once done)
// only on requests the race checker awaits (`stamp_wait`, set by the
// checking path before the call is issued), and read only by it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "transport/ready_fd.hpp"

namespace onesided::detail {

struct RequestState {
  static constexpr int kAwaited = 1 << 30;  // far above any count of transfers
  std::atomic<int> pending{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::string error;
  // Nasty mode holds operations back: Wait and Test release them first.
  std::function<void()> release_held;
  // When Wait (or a Test that returned true) saw the operation complete, on
  // the steady clock in ns; 0 before. From then on MPI lets the origin rely
  // on a fetched result, so the race checker (paths/checking_path.cpp)
  // counts a read with a Request as done at the target, and needs the time
  // for its shared-lock intervals. Only requests with `stamp_wait` are
  // stamped: a window that does not check races pays one predictable
  // branch per Wait, not a clock read.
  std::atomic<std::uint64_t> waited_at{0};
  std::atomic<bool> stamp_wait{false};

  // Whether every transfer completed (the acquire side of complete()).
  bool done() const { return (pending.load(std::memory_order_acquire) & ~kAwaited) == 0; }

  // Asks the last completion to ring ReadyFd. False: already done (nothing
  // will ring). Only meaningful once every transfer was posted (a Request
  // exists only then), since the count may touch 0 while posting.
  bool arm() {
    ReadyFd::fd();  // exists before any completion can ring it
    ReadyFd::awaited(1);  // progress stays hot until the last completion takes it back
    const int before = pending.fetch_or(kAwaited, std::memory_order_acq_rel);
    const bool waiting = (before & ~kAwaited) != 0;
    if (!waiting || (before & kAwaited)) ReadyFd::awaited(-1);  // done, or armed already
    return waiting;
  }

  void complete(const char* err) {
    if (err) {
      std::lock_guard lk(mutex);
      if (error.empty()) error = err;
      failed = true;
    }
    if (pending.fetch_sub(1, std::memory_order_acq_rel) == (kAwaited | 1)) {
      ReadyFd::awaited(-1);
      ReadyFd::ring();
    }
  }
};

}  // namespace onesided::detail
