// Piece runs (paths/piece_runs.hpp): how the origin plans a batch of short
// pieces into runs, and how the target checks a message's runs before it
// touches a byte (scattered puts, gathered gets, software atomic runs).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "paths/piece_runs.hpp"

using namespace onesided::detail;

namespace {

std::vector<PieceRun> plan(const std::vector<Piece>& pieces, std::size_t max_runs = 1000) {
  std::vector<PieceRun> runs;
  std::size_t data = 0;
  const std::size_t end = plan_runs(std::span<const Piece>(pieces), 0, runs, data,
                                    [&](std::size_t n, std::size_t) { return n <= max_runs; });
  EXPECT_EQ(end, pieces.size());
  return runs;
}

// A window of `size` bytes at offset 0 of the target's address space.
struct Window {
  std::vector<std::byte> bytes;
  explicit Window(std::size_t size) : bytes(size) {}
  std::byte* operator()(std::uint64_t at, std::size_t n) {
    return at <= bytes.size() && n <= bytes.size() - at ? bytes.data() + at : nullptr;
  }
};

std::vector<std::byte> payload_of(const std::vector<PieceRun>& runs) {
  std::vector<std::byte> p(runs.size() * sizeof(PieceRun));
  std::memcpy(p.data(), runs.data(), p.size());
  return p;
}

Header header(std::uint64_t offset, std::size_t runs) {
  Header h{};
  h.offset = offset;
  h.count = static_cast<std::uint32_t>(runs);
  return h;
}

}  // namespace

// A column (equal pieces, equal steps) is one run whatever its length; a
// piece of another size or step opens the next run; a negative step is kept.
TEST(PieceRuns, PlanJoinsEqualPiecesAtEqualSteps) {
  std::vector<Piece> column;
  for (std::int64_t i = 0; i < 100; ++i) column.push_back({8 * i, static_cast<std::uint64_t>(512 * i), 8});
  const auto one = plan(column);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].count, 100u);
  EXPECT_EQ(one[0].stride, 512);
  EXPECT_EQ(one[0].bytes, 8u);

  const auto mixed = plan({{0, 0, 8}, {8, 64, 8}, {16, 200, 8}, {24, 160, 16}, {40, 96, 8}, {48, 32, 8}});
  ASSERT_EQ(mixed.size(), 4u);
  EXPECT_EQ(mixed[0].count, 2u);   // 0, 64
  EXPECT_EQ(mixed[1].offset, 200u);  // the same size, another step
  EXPECT_EQ(mixed[1].count, 1u);
  EXPECT_EQ(mixed[2].bytes, 16u);  // a longer piece
  EXPECT_EQ(mixed[3].count, 2u);   // 96, 32: a step of -64
  EXPECT_EQ(mixed[3].stride, -64);
}

// Planning stops where the caller's limit says, and goes on from there.
TEST(PieceRuns, PlanStopsAtTheLimit) {
  const std::vector<Piece> pieces{{0, 0, 8}, {8, 100, 16}, {24, 300, 8}, {32, 1000, 24}};
  std::vector<PieceRun> runs;
  std::size_t data = 0;
  const auto fits = [](std::size_t n, std::size_t) { return n <= 2; };
  const std::size_t end = plan_runs(std::span<const Piece>(pieces), 0, runs, data, fits);
  EXPECT_EQ(end, 2u);
  EXPECT_EQ(data, 24u);
  EXPECT_EQ(plan_runs(std::span<const Piece>(pieces), end, runs, data, fits), 4u);
  EXPECT_EQ(runs.size(), 2u);
}

// The target's check accepts runs inside its window and visits every piece
// at its address, in order.
TEST(PieceRuns, CheckedRunsVisitsEveryPieceInOrder) {
  Window w(4096);
  const std::vector<PieceRun> runs{{0, 64, 8, 3}, {1000, -100, 4, 2}};
  const auto payload = payload_of(runs);
  const Header h = header(16, runs.size());
  const CheckedRuns checked(h, payload.data(), payload.size(), 1 << 20, w);
  ASSERT_EQ(checked.error(), nullptr);
  EXPECT_EQ(checked.data(), 3u * 8 + 2 * 4);
  std::vector<std::ptrdiff_t> at;
  checked.each([&](std::byte* p, std::size_t) {
    at.push_back(p - w.bytes.data());
    return true;
  });
  EXPECT_EQ(at, (std::vector<std::ptrdiff_t>{16, 80, 144, 1016, 916}));
}

// Anything that would reach outside the window, or past the message, or
// overflow, is refused before any piece is visited.
TEST(PieceRuns, CheckedRunsRefusesWhatLeavesTheWindowOrTheMessage) {
  Window w(4096);
  auto error_of = [&](std::vector<PieceRun> runs, std::uint64_t offset, std::size_t max_data,
                      std::size_t count_claimed) {
    const auto payload = payload_of(runs);
    const Header h = header(offset, count_claimed);
    const CheckedRuns checked(h, payload.data(), payload.size(), max_data, w);
    return checked.error() ? std::string(checked.error()) : std::string();
  };
  EXPECT_EQ(error_of({{0, 8, 8, 512}}, 0, 1 << 20, 1), "");                       // exactly the window
  EXPECT_NE(error_of({{0, 8, 8, 513}}, 0, 1 << 20, 1), "");                       // one piece past its end
  EXPECT_NE(error_of({{0, -8, 8, 2}}, 0, 1 << 20, 1), "");                        // below its start
  EXPECT_NE(error_of({{4090, 0, 8, 1}}, 0, 1 << 20, 1), "");                      // a piece across its end
  EXPECT_NE(error_of({{0, 8, 8, 4}}, 0, 31, 1), "");                              // more data than the message
  EXPECT_NE(error_of({{0, 8, 8, 1}}, 0, 1 << 20, 2), "");                         // more runs than sent
  EXPECT_NE(error_of({{0, 8, 8, 0}}, 0, 1 << 20, 1), "");                         // an empty run
  const auto huge = std::numeric_limits<std::int64_t>::max();
  EXPECT_NE(error_of({{0, huge, 8, 3}}, 0, 1 << 20, 1), "");                      // a step that overflows
  EXPECT_NE(error_of({{0, 8, 8, 1}}, std::numeric_limits<std::uint64_t>::max() - 4, 1 << 20, 1), "");
}

// The origin's side of a reply: a GatherPlan writes each piece's bytes at
// its own offset, in order, and a piece continuing the last one is merged
// (a contiguous result is one memcpy).
TEST(PieceRuns, GatherPlanPlacesEachPieceAtItsOffset) {
  std::vector<std::uint8_t> result(16, 0xEE);
  GatherPlan plan{reinterpret_cast<std::byte*>(result.data()), {}};
  plan.add(0, 100, 2);
  plan.add(2, 300, 2);  // continues the first piece: merged
  plan.add(8, 200, 3);  // a gap: a piece of its own
  plan.add(14, 0, 1);
  ASSERT_EQ(plan.pieces.size(), 3u);
  EXPECT_EQ(plan.pieces[0].bytes, 4u);
  EXPECT_EQ(plan.bytes, 8u);
  const std::uint8_t reply[] = {1, 2, 3, 4, 5, 6, 7, 8};
  plan.place(reinterpret_cast<const std::byte*>(reply));
  const std::vector<std::uint8_t> expected = {1, 2, 3, 4, 0xEE, 0xEE, 0xEE, 0xEE,
                                              5, 6, 7, 0xEE, 0xEE, 0xEE, 8, 0xEE};
  EXPECT_EQ(result, expected);
}
