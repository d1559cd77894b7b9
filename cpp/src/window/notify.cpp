// Notified RMA: notify() at the origin (checked at the edge like every
// data call, then one call on the path, which decides how the counter is
// reached: data_path.hpp), and this rank's counters at the target
// (window/notify_counters.hpp).
#include <chrono>

#include "window/impl.hpp"

namespace onesided {

using namespace detail;

void Window::Impl::notify(int target, std::uint64_t index, const RequestPtr& request) {
  const std::size_t i = notify_counters.check(index);
  if (target == kProcNull) return s.check_live();
  access(target);
  path->notify(target, i, request);
}

void Window::notify(int target, std::size_t index, Request* request) {
  auto state = request_state_for(request);
  impl_->notify(target, index, state);
  if (request) *request = Request(state, impl_->s.endpoint, target, impl_->s.life_of(target));
}

std::size_t Window::notifications() const { return impl_->notify_counters.size(); }

std::uint64_t Window::notify_value(std::size_t index) const {
  impl_->s.check_live();
  return impl_->notify_counters.value(impl_->notify_counters.check(index));
}

std::uint64_t Window::set_notify_value(std::size_t index, std::uint64_t value) {
  impl_->s.check_live();
  return impl_->notify_counters.set(impl_->notify_counters.check(index), value);
}

bool Window::test_notify(std::size_t index, std::uint64_t value) {
  auto& s = impl_->s;
  s.check_live();
  const std::size_t i = impl_->notify_counters.check(index);
  if (impl_->notify_counters.reached(i, value)) return true;
  // A whole round, as Win_test: a notification the progress thread is
  // dispatching right now is seen, not answered with no.
  s.endpoint->progress().poll_whole();
  return impl_->notify_counters.reached(i, value);
}

void Window::wait_notify(std::size_t index, std::uint64_t value) {
  auto& s = impl_->s;
  s.check_live();
  const std::size_t i = impl_->notify_counters.check(index);
  auto next = std::chrono::steady_clock::now() + kPeerCheck;
  s.endpoint->progress().spin([&] { return impl_->notify_counters.reached(i, value); },
                              [&] {
                                if (std::chrono::steady_clock::now() < next) return;
                                s.check_peers();  // raises if a rank died (pid, or liveness connection)
                                next = std::chrono::steady_clock::now() + kPeerCheck;
                              });
}

std::string Window::notification_mechanism() const {
  if (impl_->notify_counters.size() == 0) return "none (info onesided_notifications=0)";
  return impl_->path->notification();
}

}  // namespace onesided
