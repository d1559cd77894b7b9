// A request-based RMA operation (Rrmw, Rrmw2, ...): completes on its own,
// as well as at the flush, unlock or fence that covers its target.
#pragma once

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
  // fetched result is valid). Raises if it failed.
  void wait();
  // Drives progress once; true once wait() would return at once.
  bool test();
  bool valid() const { return state_ != nullptr; }

 private:
  friend class Window;
  Request(std::shared_ptr<detail::RequestState> state, std::shared_ptr<detail::Endpoint> endpoint)
      : state_(std::move(state)), endpoint_(std::move(endpoint)) {}
  std::shared_ptr<detail::RequestState> state_;
  std::shared_ptr<detail::Endpoint> endpoint_;
};

}  // namespace onesided
