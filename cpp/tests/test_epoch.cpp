#include <gtest/gtest.h>

#include "epoch.hpp"
#include "onesided/error.hpp"

using namespace onesided;
using detail::EpochState;

namespace {
ErrorCategory category_of(auto&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.category();
  }
  return ErrorCategory::Internal;  // nothing raised
}
}  // namespace

TEST(Epoch, OperationOutsideAnyEpochIsRejected) {
  EpochState s(4);
  EXPECT_EQ(category_of([&] { s.check_access(1); }), ErrorCategory::Epoch);
}

TEST(Epoch, LockGrantsAccessOnlyToItsTarget) {
  EpochState s(4);
  s.on_lock(2);
  EXPECT_NO_THROW(s.check_access(2));
  EXPECT_EQ(category_of([&] { s.check_access(1); }), ErrorCategory::Epoch);
  s.on_unlock(2);
  EXPECT_EQ(category_of([&] { s.check_access(2); }), ErrorCategory::Epoch);
}

TEST(Epoch, NestedLockUnlockWithoutLockAndFreeWhileLockedRaise) {
  EpochState s(2);
  s.on_lock(1);
  EXPECT_EQ(category_of([&] { s.on_lock(1); }), ErrorCategory::Epoch);
  EXPECT_EQ(category_of([&] { s.on_lock_all(); }), ErrorCategory::Epoch);
  EXPECT_EQ(category_of([&] { s.check_free(); }), ErrorCategory::Epoch);
  EXPECT_EQ(category_of([&] { s.on_unlock(0); }), ErrorCategory::Epoch);
  EXPECT_EQ(category_of([&] { s.on_fence(0); }), ErrorCategory::Epoch);
  s.on_unlock(1);
  EXPECT_NO_THROW(s.check_free());
}

TEST(Epoch, FenceOpensAccessUntilNoSucceed) {
  EpochState s(2);
  s.on_fence(0);
  EXPECT_NO_THROW(s.check_access(1));
  // Operations were issued in the fence epoch: a lock now is misuse.
  EXPECT_EQ(category_of([&] { s.on_lock(1); }), ErrorCategory::Epoch);
  s.on_fence(mode::kNoSucceed);
  EXPECT_EQ(category_of([&] { s.check_access(1); }), ErrorCategory::Epoch);
  EXPECT_NO_THROW(s.on_lock(1));
}

TEST(Epoch, LockAfterAnEmptyFenceIsAllowed) {
  EpochState s(2);
  s.on_fence(0);
  EXPECT_NO_THROW(s.on_lock_all());
  EXPECT_NO_THROW(s.check_access(0));
  EXPECT_EQ(category_of([&] { s.on_unlock(0); }), ErrorCategory::Epoch);
  s.on_unlock_all();
  EXPECT_EQ(category_of([&] { s.on_unlock_all(); }), ErrorCategory::Epoch);
}
