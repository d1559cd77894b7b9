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
class LifeSign;
}  // namespace detail

class Request {
 public:
  Request() = default;
  // Returns once the operation is complete at the origin and the target (a
  // fetched result is valid). Raises if it failed, or once the target's
  // process is found dead: within about 100 ms of its exit, or, on another
  // host, of the peer timeout after its host went silent (the window's
  // peer watch, peers/liveness.hpp).
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
  // target_life: whether the target's process lives (nullptr: the target
  // is this rank, nothing to watch).
  Request(std::shared_ptr<detail::RequestState> state, std::shared_ptr<detail::Endpoint> endpoint, int target,
          std::shared_ptr<const detail::LifeSign> target_life)
      : state_(std::move(state)), endpoint_(std::move(endpoint)), target_(target),
        target_life_(std::move(target_life)) {}
  void check_target();
  std::shared_ptr<detail::RequestState> state_;
  std::shared_ptr<detail::Endpoint> endpoint_;
  int target_ = -1;
  std::shared_ptr<const detail::LifeSign> target_life_;
  std::chrono::steady_clock::time_point next_check_{};  // test()'s next look at the target
};

}  // namespace onesided
