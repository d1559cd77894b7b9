// The attached-region table of dynamic windows.
#include <gtest/gtest.h>

#include "onesided/error.hpp"
#include "memory/region_table.hpp"

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
