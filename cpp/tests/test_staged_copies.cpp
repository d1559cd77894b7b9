// The cross-memory path's stages of small puts and gets (paths/staged_copies.hpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "paths/staged_copies.hpp"

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

void put(StagedCopies& s, Recorder& r, int target, std::uint64_t remote, std::vector<std::uint8_t> bytes) {
  s.put(target, remote, bytes.data(), bytes.size(), r);
}

}  // namespace

TEST(StagedCopies, PutsDrainInStagingOrderAndOnlyTheTargetAsked) {
  StagedCopies s(3);
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
TEST(StagedCopies, PutsCombineOnlyWhereTheTargetCouldNotTell) {
  StagedCopies s(2);
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
TEST(StagedCopies, AFullStageDrainsBeforeTheNextPut) {
  StagedCopies s(2);
  Recorder r;
  for (std::uint64_t k = 0; k <= StagedCopies::kPieces; ++k) put(s, r, 1, 16 * k, {static_cast<std::uint8_t>(k)});
  ASSERT_EQ(r.writes.size(), 1u);
  EXPECT_EQ(r.writes[0].size(), StagedCopies::kPieces);
  EXPECT_EQ(r.writes[0].back().remote, 16 * (StagedCopies::kPieces - 1));
  s.drain(1, r);
  ASSERT_EQ(r.writes.size(), 2u);
  EXPECT_EQ(r.writes[1][0].remote, 16 * StagedCopies::kPieces);

  const std::vector<std::uint8_t> big(StagedCopies::kLargest, 7);
  for (std::uint64_t k = 0; k <= StagedCopies::kBytes / StagedCopies::kLargest; ++k)
    s.put(1, 100000 * (k + 1), big.data(), big.size(), r);
  ASSERT_EQ(r.writes.size(), 3u);
  EXPECT_EQ(r.writes[2].size(), StagedCopies::kBytes / StagedCopies::kLargest);
}

// A write that fails (a target that died) still empties the stage.
TEST(StagedCopies, AFailedWriteLeavesTheStageEmpty) {
  StagedCopies s(2);
  const std::uint8_t one = 1;
  auto fail = [](int, std::span<const cma::Piece>) { throw std::runtime_error("target died"); };
  s.put(1, 100, &one, 1, fail);
  EXPECT_THROW(s.drain(1, fail), std::runtime_error);
  Recorder r;
  s.drain(1, r);
  EXPECT_TRUE(r.writes.empty());
}

// A staged get records where its result goes; the drain's copy reads into
// it. Gets combine only when both sides continue the last piece: the same
// range read into two buffers stays two pieces.
TEST(StagedCopies, GetsKeepTheirResultsAndCombineOnBothSides) {
  StagedCopies s(2);
  std::vector<std::vector<cma::Piece>> drains;
  auto copy = [&](int, std::span<const cma::Piece> p) { drains.emplace_back(p.begin(), p.end()); };
  std::uint64_t a[4] = {}, b = 0;
  s.get(1, 800, &a[0], 8, copy);
  s.get(1, 808, &a[1], 8, copy);  // both sides continue: one piece of 16
  s.get(1, 800, &b, 8, copy);     // the same range into another buffer
  s.get(1, 800, &b, 8, copy);     // and again into that one: read once
  s.get(1, 900, &a[3], 8, copy);  // a jump on both sides
  EXPECT_TRUE(drains.empty());
  s.drain(1, copy);
  ASSERT_EQ(drains.size(), 1u);
  ASSERT_EQ(drains[0].size(), 3u);
  EXPECT_EQ(drains[0][0].local, &a[0]);
  EXPECT_EQ(drains[0][0].bytes, 16u);
  EXPECT_EQ(drains[0][1].local, &b);
  EXPECT_EQ(drains[0][2].remote, 900u);
  for (std::size_t k = 0; k <= StagedCopies::kPieces; ++k) s.get(1, 16 * k, &b, 8, copy);
  ASSERT_EQ(drains.size(), 2u);  // a full stage drained before the last get
  EXPECT_EQ(drains[1].size(), StagedCopies::kPieces);
}
