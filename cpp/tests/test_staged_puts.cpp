// The cross-memory path's stage of small puts (paths/staged_puts.hpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "paths/staged_puts.hpp"

using namespace onesided::detail;

namespace {

// What the drains wrote, piece by piece: (target, remote, bytes' values).
struct Written {
  int target;
  std::uint64_t remote;
  std::vector<std::uint8_t> bytes;
};

struct Recorder {
  std::vector<std::vector<Written>> writes;  // one entry per drain's write
  void operator()(int target, std::span<const cma::Piece> pieces) {
    auto& w = writes.emplace_back();
    for (const auto& p : pieces) {
      const auto* b = static_cast<const std::uint8_t*>(p.local);
      w.push_back({target, p.remote, {b, b + p.bytes}});
    }
  }
};

void put(StagedPuts& s, Recorder& r, int target, std::uint64_t remote, std::vector<std::uint8_t> bytes) {
  s.stage(target, remote, bytes.data(), bytes.size(), r);
}

}  // namespace

TEST(StagedPuts, DrainsInStagingOrderAndOnlyTheTargetAsked) {
  StagedPuts s(3);
  Recorder r;
  put(s, r, 1, 100, {1, 2});
  put(s, r, 2, 500, {9});
  put(s, r, 1, 50, {3});
  EXPECT_TRUE(r.writes.empty());  // staged, not written
  s.drain(1, r);
  ASSERT_EQ(r.writes.size(), 1u);
  ASSERT_EQ(r.writes[0].size(), 2u);
  EXPECT_EQ(r.writes[0][0].remote, 100u);
  EXPECT_EQ(r.writes[0][0].bytes, (std::vector<std::uint8_t>{1, 2}));
  EXPECT_EQ(r.writes[0][1].remote, 50u);
  s.drain(1, r);  // empty now: no write
  EXPECT_EQ(r.writes.size(), 1u);
  s.drain(2, r);
  ASSERT_EQ(r.writes.size(), 2u);
  EXPECT_EQ(r.writes[1][0].target, 2);
}

// The same range again replaces the last piece; the range right after it
// extends it; anything else is a piece of its own (an earlier piece is
// never changed: a later put to it must still land after the ones between).
TEST(StagedPuts, CombinesOnlyWhereTheTargetCouldNotTell) {
  StagedPuts s(2);
  Recorder r;
  put(s, r, 1, 100, {1, 1});
  put(s, r, 1, 100, {2, 2});  // same range: replaces
  put(s, r, 1, 102, {3});     // right after: extends
  put(s, r, 1, 200, {4});
  put(s, r, 1, 100, {5, 5, 5});  // the first range again, after another piece: its own
  s.drain(1, r);
  ASSERT_EQ(r.writes.size(), 1u);
  ASSERT_EQ(r.writes[0].size(), 3u);
  EXPECT_EQ(r.writes[0][0].remote, 100u);
  EXPECT_EQ(r.writes[0][0].bytes, (std::vector<std::uint8_t>{2, 2, 3}));
  EXPECT_EQ(r.writes[0][1].bytes, (std::vector<std::uint8_t>{4}));
  EXPECT_EQ(r.writes[0][2].bytes, (std::vector<std::uint8_t>{5, 5, 5}));
}

// A full stage (pieces or bytes) is written before the next put is staged.
TEST(StagedPuts, AFullStageDrainsBeforeTheNextPut) {
  StagedPuts s(2);
  Recorder r;
  for (std::uint64_t k = 0; k <= StagedPuts::kPieces; ++k) put(s, r, 1, 16 * k, {static_cast<std::uint8_t>(k)});
  ASSERT_EQ(r.writes.size(), 1u);
  EXPECT_EQ(r.writes[0].size(), StagedPuts::kPieces);
  EXPECT_EQ(r.writes[0].back().remote, 16 * (StagedPuts::kPieces - 1));
  s.drain(1, r);
  ASSERT_EQ(r.writes.size(), 2u);
  EXPECT_EQ(r.writes[1][0].remote, 16 * StagedPuts::kPieces);

  const std::vector<std::uint8_t> big(StagedPuts::kLargest, 7);
  for (std::uint64_t k = 0; k <= StagedPuts::kBytes / StagedPuts::kLargest; ++k)
    s.stage(1, 100000 * (k + 1), big.data(), big.size(), r);
  ASSERT_EQ(r.writes.size(), 3u);
  EXPECT_EQ(r.writes[2].size(), StagedPuts::kBytes / StagedPuts::kLargest);
}

// A write that fails (a target that died) still empties the stage.
TEST(StagedPuts, AFailedWriteLeavesTheStageEmpty) {
  StagedPuts s(2);
  const std::uint8_t one = 1;
  auto fail = [](int, std::span<const cma::Piece>) { throw std::runtime_error("target died"); };
  s.stage(1, 100, &one, 1, fail);
  EXPECT_THROW(s.drain(1, fail), std::runtime_error);
  Recorder r;
  s.drain(1, r);
  EXPECT_TRUE(r.writes.empty());
}
