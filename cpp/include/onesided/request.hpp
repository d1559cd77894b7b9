// A request-based RMA operation (Rrmw, Rrmw2, ...): completes on its own,
// as well as at the flush, unlock or fence that covers its target.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

namespace onesided {

namespace detail {
struct RequestState;
class Endpoint;
}  // namespace detail

class Request {
 public:
  Request() = default;
  // Returns once the operation is complete at the origin and the target (a
  // fetched result is valid). Raises if it failed, or (target on this host)
  // within about 100 ms of finding the target's process dead.
  void wait();
  // Drives progress once; true once wait() would return at once. Raises as
  // wait() does; the target's process is looked at every 100 ms at most.
  bool test();
  bool valid() const { return state_ != nullptr; }

  // For event loops (python/onesided/window/_aio.py). done(): whether wait() would
  // return at once, without progressing or raising. arm(): from now on the
  // operation's completion writes to ready_fd(), the one eventfd of this
  // process, which a loop waits on; false when already done (nothing will
  // be written). Arming twice is harmless. In nasty mode arm() first
  // releases the held operations, as wait() does.
  bool done() const;
  bool arm();
  static int ready_fd();

 private:
  friend class Window;
  // target_pid: the target's process when it is on this host and another
  // process (0: nothing to watch; the transport reports a broken peer).
  Request(std::shared_ptr<detail::RequestState> state, std::shared_ptr<detail::Endpoint> endpoint, int target,
          std::int64_t target_pid)
      : state_(std::move(state)), endpoint_(std::move(endpoint)), target_(target), target_pid_(target_pid) {}
  void check_target();
  std::shared_ptr<detail::RequestState> state_;
  std::shared_ptr<detail::Endpoint> endpoint_;
  int target_ = -1;
  std::int64_t target_pid_ = 0;
  std::chrono::steady_clock::time_point next_check_{};  // test()'s next look at the target
};

}  // namespace onesided
