#include <gtest/gtest.h>

#include "locks/lock_table.hpp"
#include "onesided/error.hpp"

using onesided::detail::LockTable;

TEST(LockTable, SharedHoldersCoexistExclusiveWaits) {
  LockTable t;
  EXPECT_TRUE(t.acquire(0, false));
  EXPECT_TRUE(t.acquire(1, false));
  EXPECT_FALSE(t.acquire(2, true));
  EXPECT_TRUE(t.release(0).empty());
  auto granted = t.release(1);
  ASSERT_EQ(granted.size(), 1u);
  EXPECT_EQ(granted[0], 2);
  EXPECT_TRUE(t.held_exclusively());
}

TEST(LockTable, QueuedExclusiveIsNotStarvedByLaterShared) {
  LockTable t;
  EXPECT_TRUE(t.acquire(0, false));
  EXPECT_FALSE(t.acquire(1, true));
  // A shared request after a queued exclusive one waits its turn.
  EXPECT_FALSE(t.acquire(2, false));
  auto g = t.release(0);
  ASSERT_EQ(g, std::vector<int>{1});
  g = t.release(1);
  ASSERT_EQ(g, std::vector<int>{2});
}

TEST(LockTable, ReleaseGrantsAllLeadingSharedWaiters) {
  LockTable t;
  EXPECT_TRUE(t.acquire(0, true));
  EXPECT_FALSE(t.acquire(1, false));
  EXPECT_FALSE(t.acquire(2, false));
  EXPECT_FALSE(t.acquire(3, true));
  auto g = t.release(0);
  EXPECT_EQ(g, (std::vector<int>{1, 2}));
  EXPECT_EQ(t.waiting(), 1u);
}

TEST(LockTable, ReleaseWithoutHoldIsAnError) {
  LockTable t;
  EXPECT_THROW(t.release(5), onesided::Error);
}
