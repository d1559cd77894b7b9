// The attached-region table of dynamic windows.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

#include "memory/published_regions.hpp"
#include "memory/region_table.hpp"
#include "onesided/error.hpp"

using namespace onesided;
using namespace onesided::detail;

TEST(RegionTable, FindsOnlyRangesInsideOneRegion) {
  RegionTable t;
  t.add({1000, 100, {1000, 7}});
  t.add({2000, 50, {0, 8}});
  ASSERT_NE(t.find(1000, 100), nullptr);
  EXPECT_EQ(t.find(1050, 8)->remote.key, 7u);
  EXPECT_EQ(t.find(2000, 50)->remote.key, 8u);
  EXPECT_EQ(t.find(1096, 8), nullptr);   // straddles the end
  EXPECT_EQ(t.find(999, 2), nullptr);    // starts before
  EXPECT_EQ(t.find(1500, 1), nullptr);   // between regions
  EXPECT_EQ(t.find(2049, UINT64_MAX), nullptr);  // no overflow
}

TEST(RegionTable, RejectsOverlapsAndRoundTrips) {
  RegionTable t;
  t.add({1000, 100, {}});
  EXPECT_THROW(t.add({1099, 10, {}}), Error);
  EXPECT_THROW(t.add({950, 51, {}}), Error);
  t.add({1100, 10, {}});
  auto copy = RegionTable::from_bytes(t.bytes());
  EXPECT_EQ(copy.size(), 2u);
  EXPECT_NE(copy.find(1105, 5), nullptr);
  EXPECT_TRUE(t.remove(1000));
  EXPECT_FALSE(t.remove(1000));
  EXPECT_EQ(t.find(1000, 1), nullptr);
}

// Regions attached side by side cover a range together (MPI 4.1 12.2.4:
// only unattached memory is erroneous); a gap anywhere breaks the cover.
TEST(RegionTable, CoversRangesAcrossRegionsAttachedSideBySide) {
  RegionTable t;
  t.add({1000, 100, {0, 7}});
  t.add({1100, 50, {0, 8}});
  t.add({1150, 10, {0, 9}});
  t.add({2000, 50, {0, 10}});
  EXPECT_EQ(t.cover(1050, 8).size(), 1u);  // inside one: the region itself
  auto c = t.cover(1090, 65);              // 1090..1155: three regions
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].remote.key, 7u);
  EXPECT_EQ(c[2].remote.key, 9u);
  EXPECT_EQ(t.cover(1090, 70).size(), 3u);   // up to the last byte of the third
  EXPECT_TRUE(t.cover(1090, 71).empty());    // one byte past it: a gap
  EXPECT_TRUE(t.cover(1140, 900).empty());   // runs into the gap before 2000
  EXPECT_TRUE(t.cover(990, 20).empty());     // starts before the first
  EXPECT_TRUE(t.cover(1155, UINT64_MAX).empty());  // no overflow
}

// ---- published tables (memory/published_regions.hpp) ------------------------
// Two views of one zeroed mapping, as two ranks of one window have: rank 0
// attaches and detaches, rank 1 is an origin.

namespace {

struct Published {
  static constexpr int kRanks = 2;
  std::shared_ptr<std::byte> memory{
      static_cast<std::byte*>(std::aligned_alloc(64, (PublishedRegions::bytes(kRanks) + 63) / 64 * 64)), std::free};
  PublishedRegions target, origin;
  Published()
      : target((std::memset(memory.get(), 0, PublishedRegions::bytes(kRanks)), memory.get()), kRanks, 0, memory),
        origin(memory.get(), kRanks, 1, memory) {}
};

RegionTable table_of(std::initializer_list<std::pair<std::uint64_t, std::uint64_t>> regions) {
  RegionTable t;
  for (auto [base, len] : regions) t.add({base, len, {}});
  return t;
}

const auto nobody_gone = [](int) { return false; };

}  // namespace

TEST(PublishedRegions, OriginsCheckWhatTheTargetAttached) {
  Published p;
  p.target.publish(table_of({{1000, 100}, {1100, 50}, {2000, 8}}), nobody_gone);
  EXPECT_TRUE(p.origin.hold(0, 1050, 8, {}));
  EXPECT_TRUE(p.origin.hold(0, 1096, 8, {}));   // across regions side by side
  EXPECT_FALSE(p.origin.hold(0, 1140, 20, {}));  // runs past the second into a gap
  EXPECT_FALSE(p.origin.hold(0, 1500, 1, {}));
  EXPECT_FALSE(p.origin.hold(0, 2001, UINT64_MAX, {}));
  EXPECT_EQ(p.origin.cover(0, 1096, 8, {}).size(), 2u);  // side by side, as RegionTable::cover
  EXPECT_TRUE(p.origin.cover(0, 1140, 900, {}).empty());
  EXPECT_TRUE(p.origin.cover(1, 1050, 8, {}).empty());   // rank 1 attached nothing
  p.target.publish(table_of({{2000, 8}}), nobody_gone);
  EXPECT_FALSE(p.origin.hold(0, 1050, 8, {}));
  EXPECT_TRUE(p.origin.hold(0, 2000, 8, {}));
}

// A Detach returns only once the copies that checked the old table have
// ended: the writer is seen waiting (it asks whether the origin died, which
// it does only while it waits) and not returned while the hold lives.
TEST(PublishedRegions, DetachWaitsForTheCopiesInFlight) {
  Published p;
  p.target.publish(table_of({{1000, 100}}), nobody_gone);
  auto held = std::make_unique<PublishedRegions::Hold>(p.origin.hold(0, 1000, 100, {}));
  ASSERT_TRUE(*held);
  std::atomic<int> asked{0};
  std::atomic<bool> returned{false};
  std::thread detach([&] {
    p.target.publish(RegionTable{}, [&](int o) {
      EXPECT_EQ(o, 1);
      asked.fetch_add(1);
      return false;
    });
    returned.store(true);
  });
  while (asked.load() < 3 && !returned.load()) std::this_thread::yield();
  EXPECT_FALSE(returned.load()) << "Detach returned while an origin was still copying";
  held.reset();
  detach.join();
  EXPECT_TRUE(returned.load());
  EXPECT_FALSE(p.origin.hold(0, 1000, 100, {}));
}

// An origin that died holding its count never leaves: the Detach goes on.
TEST(PublishedRegions, AnOriginThatDiedDoesNotHoldUpDetach) {
  Published p;
  p.target.publish(table_of({{1000, 100}}), nobody_gone);
  auto held = p.origin.hold(0, 1000, 100, {});
  ASSERT_TRUE(held);
  p.target.publish(RegionTable{}, [](int) { return true; });
  EXPECT_FALSE(p.origin.hold(0, 1000, 100, {}));
}

// Attach and Detach racing with origins: an origin holding a region never
// finds it gone. The writer marks a region dead only after the Detach that
// removed it returned, and alive again before the Attach that restores it;
// one region is dead at a time, for a whole round.
TEST(PublishedRegions, NoOriginCopiesIntoMemoryADetachReturnedFrom) {
  Published p;
  constexpr int kRegions = 4, kRounds = 20000;
  auto base = [](int k) { return 1000u + 100u * static_cast<unsigned>(k); };
  std::array<std::atomic<bool>, kRegions> alive{};
  RegionTable mine;
  for (int k = 0; k + 1 < kRegions; ++k) {
    mine.add({base(k), 100, {}});
    alive[k].store(true);
  }
  p.target.publish(mine, nobody_gone);
  std::atomic<bool> done{false};
  std::atomic<long> held_count{0}, broken{0};
  std::thread origin([&] {
    for (int i = 0; !done.load(std::memory_order_relaxed); ++i) {
      const int k = i % kRegions;
      if (auto h = p.origin.hold(0, base(k) + 10, 8, {})) {
        held_count.fetch_add(1, std::memory_order_relaxed);
        for (int copy = 0; copy < 256; ++copy)  // as long as a short copy takes
          if (!alive[k].load(std::memory_order_relaxed)) {
            broken.fetch_add(1);
            break;
          }
      }
    }
  });
  for (int round = 0; round < kRounds; ++round) {
    const int k = round % kRegions, back = (k + kRegions - 1) % kRegions;
    // An Attach right before a Detach: a copy that checked the table
    // before the Attach must still hold up the Detach.
    alive[back].store(true, std::memory_order_relaxed);
    mine.add({base(back), 100, {}});
    p.target.publish(mine, nobody_gone);
    mine.remove(base(k));
    p.target.publish(mine, nobody_gone);
    alive[k].store(false, std::memory_order_relaxed);
    // The origin copies between rounds, so every round races with it.
    for (const long seen = held_count.load(); held_count.load() < seen + 2;) std::this_thread::yield();
  }
  done.store(true);
  origin.join();
  EXPECT_EQ(broken.load(), 0);
  EXPECT_GT(held_count.load(), 0);
}
