// The window lock at a target: shared/exclusive, granted first come first
// served so a stream of shared lockers cannot starve an exclusive one. Pure
// logic; the window sends the grant messages.
#pragma once

#include <deque>
#include <unordered_map>
#include <vector>

namespace onesided::detail {

class LockTable {
 public:
  // True if `origin` holds the lock now; otherwise it is queued and a later
  // release() returns it among the newly granted.
  bool acquire(int origin, bool exclusive);
  // Releases origin's hold; returns the origins granted as a consequence.
  // Raises an Internal error if origin holds nothing (a protocol bug).
  std::vector<int> release(int origin);

  bool held_exclusively() const { return exclusive_holder_ >= 0; }
  std::size_t shared_holders() const { return shared_.size(); }
  std::size_t waiting() const { return queue_.size(); }

 private:
  struct Waiter {
    int origin;
    bool exclusive;
  };
  bool grantable(const Waiter& w) const;
  void grant(const Waiter& w);

  int exclusive_holder_ = -1;
  std::unordered_map<int, int> shared_;  // origin -> holds (one per origin thread epoch)
  std::deque<Waiter> queue_;
};

}  // namespace onesided::detail
