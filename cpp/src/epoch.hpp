// Access-epoch bookkeeping at the origin: which synchronisation call opened
// access to which target, and which calls are legal next. Pure logic (no
// communication) so every rule is unit-tested on its own.
#pragma once

#include <cstdint>
#include <vector>

#include "onesided/window.hpp"

namespace onesided::detail {

class EpochState {
 public:
  explicit EpochState(int group_size);

  // Rules enforced (each violation raises an Epoch error naming it):
  //  - RMA needs an epoch granting access to the target: a fence epoch, a
  //    lock on the target, or lock_all.
  //  - lock/lock_all are illegal while a fence epoch holds issued operations
  //    (MPI lets a fence with no operations since be followed by a lock).
  //  - no nested lock of one target, no lock inside lock_all and vice versa.
  //  - unlock needs a lock on that target, unlock_all needs lock_all.
  //  - fence is illegal inside a passive-target epoch.
  void check_access(int target);
  void on_fence(unsigned assertion);
  void on_lock(int target);
  void on_unlock(int target);
  void on_lock_all();
  void on_unlock_all();
  // Free: illegal while any passive-target epoch is open.
  void check_free() const;

  bool locked(int target) const { return locked_[target]; }
  bool lock_all() const { return lock_all_; }

 private:
  bool passive_open() const { return lock_all_ || n_locked_ > 0; }

  std::vector<bool> locked_;
  int n_locked_ = 0;
  bool lock_all_ = false;
  bool fence_open_ = false;   // a fence without MODE_NOSUCCEED was called
  bool fence_used_ = false;   // ... and operations were issued since
};

}  // namespace onesided::detail
