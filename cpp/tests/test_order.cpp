// accumulate_ordering enforcement and nasty mode's reordering: pure logic.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "order/nasty.hpp"
#include "order/order_tracker.hpp"
#include "order/ordering.hpp"

using namespace onesided::detail;

namespace {

Access acc(std::uint64_t lo, std::uint64_t hi, bool reads, bool writes, Channel c = Channel::Native) {
  return Access{lo, hi, reads, writes, c};
}
const Access kWrite = acc(0, 8, false, true);
const Access kRead = acc(0, 8, true, false);
const AtomicOrder kNoWar{true, true, false, true};  // tcp;ofi_rxm, sizes unlimited

}  // namespace

TEST(OrderRule, WaitsOnlyForRequiredOrdersTheProviderLacks) {
  OrderRule strict(Ordering{}, kNoWar);
  EXPECT_TRUE(strict.must_wait(kRead, kWrite));    // war: missing
  EXPECT_FALSE(strict.must_wait(kWrite, kRead));   // raw: kept
  EXPECT_FALSE(strict.must_wait(kWrite, kWrite));  // waw: kept
  EXPECT_FALSE(strict.native_always_ordered());
  OrderRule relaxed(Ordering::parse("rar,raw,waw"), kNoWar);
  EXPECT_FALSE(relaxed.must_wait(kRead, kWrite));
  EXPECT_TRUE(relaxed.native_always_ordered());
}

TEST(OrderRule, DisjointRangesAndUnrequiredPairsNeverWait) {
  OrderRule strict(Ordering{}, AtomicOrder{});  // provider keeps nothing
  EXPECT_FALSE(strict.must_wait(kRead, acc(8, 16, false, true)));
  EXPECT_TRUE(strict.must_wait(kRead, acc(7, 16, false, true)));  // one byte overlaps
  OrderRule none(Ordering::parse("none"), AtomicOrder{});
  EXPECT_FALSE(none.must_wait(kWrite, kWrite));
  EXPECT_FALSE(none.requires_order(kWrite, kRead));
}

TEST(OrderRule, SizeLimitsAndChannels) {
  AtomicOrder small = {true, true, true, true, 16, 16, 16};
  OrderRule r(Ordering{}, small);
  EXPECT_FALSE(r.must_wait(kWrite, kWrite));
  EXPECT_TRUE(r.must_wait(acc(0, 32, false, true), kWrite));  // larger than max_order_waw_size
  // Software ops are applied in message order; mixing paths orders nothing.
  OrderRule keepsnothing(Ordering{}, AtomicOrder{});
  const Access sw = acc(0, 8, false, true, Channel::Messages);
  EXPECT_FALSE(keepsnothing.must_wait(sw, sw));
  EXPECT_TRUE(OrderRule(Ordering{}, AtomicOrder{true, true, true, true}).must_wait(sw, kWrite));
}

TEST(OrderTracker, ReportsPendingConflictsAndForgetsCompletedOps) {
  OrderRule rule(Ordering{}, kNoWar);
  OrderTracker t(2);
  std::set<std::uint64_t> pending = {1, 2};
  auto is_pending = [&](std::uint64_t tok) { return pending.count(tok) != 0; };
  t.record(1, 1, kRead);
  t.record(1, 2, acc(100, 108, true, false));
  EXPECT_EQ(t.before(rule, 1, kWrite, is_pending), std::vector<std::uint64_t>{1});
  EXPECT_TRUE(t.before(rule, 0, kWrite, is_pending).empty());  // other target
  pending.erase(1);
  EXPECT_TRUE(t.before(rule, 1, kWrite, is_pending).empty());
}

TEST(NastyQueue, ShufflesFreelyButKeepsRequiredOrderPerThread) {
  OrderRule strict(Ordering{}, AtomicOrder{});
  NastyQueue q(7, 0);
  std::vector<int> landed;
  const auto me = std::this_thread::get_id();
  // Pairs (write then read) on 50 distinct slots: each pair must stay in
  // order, while different slots (and the puts) interleave.
  for (int i = 0; i < 50; ++i) {
    q.hold({1, me, true, acc(8 * i, 8 * i + 8, false, true), [&, i] { landed.push_back(2 * i); }});
    q.hold({1, me, true, acc(8 * i, 8 * i + 8, true, false), [&, i] { landed.push_back(2 * i + 1); }});
  }
  for (int i = 0; i < 20; ++i) q.hold({1, me, false, {}, [&, i] { landed.push_back(1000 + i); }});
  auto ops = q.release(1, strict);
  ASSERT_EQ(ops.size(), 120u);
  for (auto& op : ops) op.post();
  std::vector<int> where(1100, -1);
  for (std::size_t k = 0; k < landed.size(); ++k) where[landed[k]] = static_cast<int>(k);
  bool reordered = false;
  for (int i = 0; i < 50; ++i) {
    EXPECT_LT(where[2 * i], where[2 * i + 1]) << "pair " << i << " reordered";
    if (i > 0 && where[2 * i] < where[2 * i - 2]) reordered = true;
  }
  EXPECT_TRUE(reordered) << "nasty mode must reorder what it may";
  EXPECT_TRUE(q.empty());
}

TEST(NastyQueue, WithoutOrderingEvenOverlappingPairsMaySwap) {
  OrderRule none(Ordering::parse("none"), AtomicOrder{});
  NastyQueue q(11, 0);
  const auto me = std::this_thread::get_id();
  int swapped = 0;
  for (int round = 0; round < 64; ++round) {
    std::vector<int> landed;
    q.hold({0, me, true, kWrite, [&] { landed.push_back(0); }});
    q.hold({0, me, true, kRead, [&] { landed.push_back(1); }});
    for (auto& op : q.release(-1, none)) op.post();
    swapped += landed[0] == 1;
  }
  EXPECT_GT(swapped, 0);
  EXPECT_LT(swapped, 64);
}

TEST(NastyQueue, ReleasesOnlyTheTargetAskedFor) {
  NastyQueue q(1, 0);
  const auto me = std::this_thread::get_id();
  q.hold({0, me, false, {}, [] {}});
  q.hold({1, me, false, {}, [] {}});
  EXPECT_EQ(q.release(1, OrderRule{}).size(), 1u);
  EXPECT_FALSE(q.empty());
  EXPECT_EQ(q.release(-1, OrderRule{}).size(), 1u);
}
