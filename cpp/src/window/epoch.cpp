#include "window/epoch.hpp"

#include <string>

#include "onesided/error.hpp"

namespace onesided::detail {
namespace {

[[noreturn]] void epoch_error(const std::string& what) { raise(ErrorCategory::Epoch, what); }

}  // namespace

EpochState::EpochState(int group_size) : locked_(static_cast<std::size_t>(group_size), false) {}

void EpochState::check_access(int target) {
  if (lock_all_ || locked_[target]) return;
  if (start_open_) {
    if (start_group_[target]) return;
    epoch_error("RMA operation on target " + std::to_string(target) +
                " which is not in the group of the current Start()");
  }
  if (fence_open_) {
    fence_used_ = true;
    return;
  }
  epoch_error("RMA operation on target " + std::to_string(target) +
              " outside an access epoch: call Fence(), Lock(" + std::to_string(target) +
              ") or Lock_all() first");
}

void EpochState::on_fence(unsigned assertion) {
  if (passive_open())
    epoch_error("Fence inside a passive-target epoch: Unlock/Unlock_all first");
  if (start_open_) epoch_error("Fence inside a Start epoch: Complete() first");
  if (post_open_) epoch_error("Fence inside a Post epoch: Wait() first");
  fence_open_ = (assertion & mode::kNoSucceed) == 0;
  fence_used_ = false;
}

void EpochState::on_lock(int target) {
  if (fence_open_ && fence_used_)
    epoch_error("Lock inside a fence epoch: end it with Fence(MODE_NOSUCCEED) first");
  if (lock_all_) epoch_error("Lock(" + std::to_string(target) + ") inside Lock_all");
  if (start_open_) epoch_error("Lock(" + std::to_string(target) + ") inside a Start epoch: Complete() first");
  if (locked_[target])
    epoch_error("Lock(" + std::to_string(target) + ") while target " + std::to_string(target) +
                " is already locked by this process");
  fence_open_ = false;
  locked_[target] = true;
  ++n_locked_;
}

void EpochState::on_unlock(int target) {
  if (!locked_[target])
    epoch_error("Unlock(" + std::to_string(target) + ") without a matching Lock(" +
                std::to_string(target) + ")");
  locked_[target] = false;
  --n_locked_;
}

void EpochState::on_lock_all() {
  if (fence_open_ && fence_used_)
    epoch_error("Lock_all inside a fence epoch: end it with Fence(MODE_NOSUCCEED) first");
  if (lock_all_) epoch_error("Lock_all while Lock_all is already held");
  if (start_open_) epoch_error("Lock_all inside a Start epoch: Complete() first");
  if (n_locked_ > 0) epoch_error("Lock_all while a Lock is held");
  fence_open_ = false;
  lock_all_ = true;
}

void EpochState::on_unlock_all() {
  if (!lock_all_) epoch_error("Unlock_all without a matching Lock_all");
  lock_all_ = false;
}

void EpochState::on_start(const std::vector<bool>& group) {
  if (start_open_) epoch_error("Start inside a Start epoch: Complete() first");
  if (passive_open()) epoch_error("Start inside a passive-target epoch: Unlock/Unlock_all first");
  if (fence_open_ && fence_used_)
    epoch_error("Start inside a fence epoch: end it with Fence(MODE_NOSUCCEED) first");
  fence_open_ = false;
  start_open_ = true;
  start_group_ = group;
}

void EpochState::on_complete() {
  if (!start_open_) epoch_error("Complete without a matching Start");
  start_open_ = false;
}

void EpochState::on_post(const std::vector<bool>& group) {
  if (post_open_) epoch_error("Post inside a Post epoch: Wait() or Test() first");
  if (fence_open_ && fence_used_)
    epoch_error("Post inside a fence epoch: end it with Fence(MODE_NOSUCCEED) first");
  fence_open_ = false;
  post_open_ = true;
  post_group_ = group;
}

void EpochState::check_wait() const {
  if (!post_open_) epoch_error("Wait/Test without a matching Post");
}

void EpochState::on_wait_done() { post_open_ = false; }

void EpochState::check_free() const {
  if (passive_open()) epoch_error("Free while a passive-target epoch (Lock/Lock_all) is open");
  if (start_open_) epoch_error("Free while a Start epoch is open: Complete() first");
  if (post_open_) epoch_error("Free while a Post epoch is open: Wait() first");
}

}  // namespace onesided::detail
