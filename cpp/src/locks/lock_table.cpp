#include "locks/lock_table.hpp"

#include <string>

#include "onesided/error.hpp"

namespace onesided::detail {

bool LockTable::grantable(const Waiter& w) const {
  if (exclusive_holder_ >= 0) return false;
  return w.exclusive ? shared_.empty() : true;
}

void LockTable::grant(const Waiter& w) {
  if (w.exclusive)
    exclusive_holder_ = w.origin;
  else
    ++shared_[w.origin];
}

bool LockTable::acquire(int origin, bool exclusive) {
  Waiter w{origin, exclusive};
  if (queue_.empty() && grantable(w)) {
    grant(w);
    return true;
  }
  queue_.push_back(w);
  return false;
}

std::vector<int> LockTable::release(int origin) {
  if (exclusive_holder_ == origin) {
    exclusive_holder_ = -1;
  } else if (auto it = shared_.find(origin); it != shared_.end()) {
    if (--it->second == 0) shared_.erase(it);
  } else {
    raise(ErrorCategory::Internal,
          "lock release by rank " + std::to_string(origin) + ", which holds no lock");
  }
  std::vector<int> granted;
  while (!queue_.empty() && grantable(queue_.front())) {
    grant(queue_.front());
    granted.push_back(queue_.front().origin);
    queue_.pop_front();
  }
  return granted;
}

}  // namespace onesided::detail
