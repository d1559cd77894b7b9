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
  //    lock on the target, lock_all, or a Start whose group holds it.
  //  - lock/lock_all are illegal while a fence epoch holds issued operations
  //    (MPI lets a fence with no operations since be followed by a lock).
  //  - no nested lock of one target, no lock inside lock_all and vice versa.
  //  - unlock needs a lock on that target, unlock_all needs lock_all.
  //  - fence is illegal inside a passive-target epoch or a Start/Post epoch.
  //  - Start/Complete and Post/Wait: no nesting, Complete needs Start,
  //    Wait/Test need Post; no Lock/Lock_all inside Start and no Start
  //    inside Lock/Lock_all.
  void check_access(int target);
  void on_fence(unsigned assertion);
  void on_lock(int target);
  void on_unlock(int target);
  void on_lock_all();
  void on_unlock_all();
  // `group[r]`: rank r is in the Start (Post) group.
  void on_start(const std::vector<bool>& group);
  void on_complete();
  void on_post(const std::vector<bool>& group);
  void check_wait() const;  // Wait and Test
  void on_wait_done();
  // Free: illegal while any passive-target, Start or Post epoch is open.
  void check_free() const;

  bool started() const { return start_open_; }
  const std::vector<bool>& start_group() const { return start_group_; }
  bool posted() const { return post_open_; }
  const std::vector<bool>& post_group() const { return post_group_; }

  bool locked(int target) const { return locked_[target]; }
  bool lock_all() const { return lock_all_; }

 private:
  bool passive_open() const { return lock_all_ || n_locked_ > 0; }

  std::vector<bool> locked_;
  int n_locked_ = 0;
  bool lock_all_ = false;
  bool fence_open_ = false;   // a fence without MODE_NOSUCCEED was called
  bool fence_used_ = false;   // ... and operations were issued since
  bool start_open_ = false;
  std::vector<bool> start_group_;
  bool post_open_ = false;
  std::vector<bool> post_group_;
};

}  // namespace onesided::detail
