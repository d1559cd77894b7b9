#include <gtest/gtest.h>

#include "window/epoch.hpp"
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

TEST(Epoch, StartGrantsAccessToItsGroupOnly) {
  EpochState s(4);
  s.on_start({false, true, false, true});
  EXPECT_NO_THROW(s.check_access(1));
  EXPECT_NO_THROW(s.check_access(3));
  EXPECT_EQ(category_of([&] { s.check_access(2); }), ErrorCategory::Epoch);
  s.on_complete();
  EXPECT_EQ(category_of([&] { s.check_access(1); }), ErrorCategory::Epoch);
}

TEST(Epoch, ActiveTargetMisuseRaises) {
  EpochState s(2);
  EXPECT_EQ(category_of([&] { s.on_complete(); }), ErrorCategory::Epoch);  // no Start
  EXPECT_EQ(category_of([&] { s.check_wait(); }), ErrorCategory::Epoch);   // no Post
  s.on_start({true, true});
  EXPECT_EQ(category_of([&] { s.on_start({true, true}); }), ErrorCategory::Epoch);
  EXPECT_EQ(category_of([&] { s.on_lock(0); }), ErrorCategory::Epoch);
  EXPECT_EQ(category_of([&] { s.on_lock_all(); }), ErrorCategory::Epoch);
  EXPECT_EQ(category_of([&] { s.on_fence(0); }), ErrorCategory::Epoch);
  EXPECT_EQ(category_of([&] { s.check_free(); }), ErrorCategory::Epoch);
  s.on_complete();
  s.on_post({true, false});
  EXPECT_EQ(category_of([&] { s.on_post({true, false}); }), ErrorCategory::Epoch);
  EXPECT_EQ(category_of([&] { s.check_free(); }), ErrorCategory::Epoch);
  EXPECT_NO_THROW(s.check_wait());
  s.on_wait_done();
  EXPECT_NO_THROW(s.check_free());
  s.on_lock_all();
  EXPECT_EQ(category_of([&] { s.on_start({true, true}); }), ErrorCategory::Epoch);
}
