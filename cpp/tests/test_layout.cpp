// Layouts: normalisation, extents, overlap, the walk in step; and strided
// puts, gets and accumulates between two real processes on every path,
// compared element by element with the same copy done locally.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <numeric>
#include <random>
#include <vector>

#include "layout/nest.hpp"
#include "layout/runs.hpp"
#include "onesided/error.hpp"
#include "onesided/layout.hpp"
#include "onesided/window.hpp"
#include "pair_processes.hpp"

using namespace onesided;
using onesided::testing::run_pair;

namespace {

// Every element offset of a layout, in visiting order, from its runs.
std::vector<std::int64_t> offsets(const Layout& l) {
  std::vector<std::int64_t> out;
  const auto size = static_cast<std::int64_t>(dtype_info(l.dtype()).size);
  for (detail::RunCursor c(l); !c.done(); c.next_run())
    for (std::uint64_t b = 0; b < c.left(); b += size) out.push_back(c.offset() + static_cast<std::int64_t>(b));
  return out;
}

TEST(Layout, ContiguousDescriptionsAreOneRun) {
  EXPECT_EQ(Layout::contiguous(Dtype::Int64, 10).runs(), 1u);
  EXPECT_TRUE(Layout::contiguous(Dtype::Int64, 10).is_contiguous());
  // A 3x4 C-ordered int32 array described by its shape and strides merges to one run.
  const std::uint64_t shape[] = {3, 4};
  const std::int64_t strides[] = {16, 4};
  const Layout l = Layout::strided(Dtype::Int32, 0, shape, strides);
  EXPECT_EQ(l.runs(), 1u);
  EXPECT_EQ(l.count(), 12u);
  EXPECT_EQ(l.hi(), 48);
  // Blocks that continue each other join (an indexed type of adjacent blocks).
  const Layout joined(Dtype::Int32, {{0, {{2, 4}}}, {8, {{3, 4}}}, {20, {}}});
  EXPECT_EQ(joined.runs(), 1u);
  EXPECT_EQ(joined.count(), 6u);
}

TEST(Layout, ColumnOfAMatrixIsOneDimOfSingleElements) {
  // Column 1 of a 4x5 float64 matrix.
  const std::uint64_t shape[] = {4};
  const std::int64_t strides[] = {40};
  const Layout col = Layout::strided(Dtype::Float64, 8, shape, strides);
  EXPECT_EQ(col.runs(), 4u);
  EXPECT_EQ(col.lo(), 8);
  EXPECT_EQ(col.hi(), 8 + 3 * 40 + 8);
  EXPECT_EQ(offsets(col), (std::vector<std::int64_t>{8, 48, 88, 128}));
  EXPECT_FALSE(col.overlaps());
}

TEST(Layout, NegativeStridesVisitBackwards) {
  const std::uint64_t shape[] = {2, 3};
  const std::int64_t strides[] = {-24, -8};  // a[::-1, ::-1] of a 2x3 int64 array
  const Layout l = Layout::strided(Dtype::Int64, 40, shape, strides);
  EXPECT_EQ(offsets(l), (std::vector<std::int64_t>{40, 32, 24, 16, 8, 0}));
  EXPECT_EQ(l.lo(), 0);
  EXPECT_EQ(l.hi(), 48);
  EXPECT_FALSE(l.overlaps());
}

TEST(Layout, OverlapIsFound) {
  const std::uint64_t shape[] = {3};
  const std::int64_t zero[] = {0};
  EXPECT_TRUE(Layout::strided(Dtype::Int32, 0, shape, zero).overlaps());
  const std::int64_t half[] = {2};  // int32 elements 2 bytes apart
  EXPECT_TRUE(Layout::strided(Dtype::Int32, 0, shape, half).overlaps());
  EXPECT_TRUE(Layout(Dtype::Int8, {{4, {{4, 1}}}, {0, {{5, 1}}}}).overlaps());
  EXPECT_FALSE(Layout(Dtype::Int8, {{4, {{4, 1}}}, {0, {{4, 1}}}}).overlaps());
}

TEST(Layout, EmptyAndOverflow) {
  const Layout empty(Dtype::Int32, {{100, {{0, 4}}}});
  EXPECT_EQ(empty.count(), 0u);
  EXPECT_EQ(empty.runs(), 0u);
  EXPECT_EQ(empty.lo(), 0);
  EXPECT_EQ(empty.hi(), 0);
  EXPECT_THROW(Layout(Dtype::Int64, {{0, {{std::uint64_t{1} << 62, 8}}}}), Error);  // bytes past 2^63
  EXPECT_THROW(Layout(Dtype::Int8, {{0, {{std::uint64_t{1} << 40, 0}, {std::uint64_t{1} << 40, 0}}}}), Error);
  EXPECT_THROW(Layout(Dtype::Int8, {{INT64_MAX, {}}}), Error);
}

TEST(Layout, PiecesAreStretchesContiguousOnEverySide) {
  // 6 contiguous elements against 2 blocks of 3: two pieces.
  const Layout a = Layout::contiguous(Dtype::Int16, 6);
  const Layout b(Dtype::Int16, {{0, {{2, 100}, {3, 2}}}});
  std::vector<std::array<std::int64_t, 3>> seen;
  detail::Pieces<2>({&a, &b}).for_each([&](const std::array<std::int64_t, 2>& at, std::uint64_t n) {
    seen.push_back({at[0], at[1], static_cast<std::int64_t>(n)});
  });
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], (std::array<std::int64_t, 3>{0, 0, 6}));
  EXPECT_EQ(seen[1], (std::array<std::int64_t, 3>{6, 100, 6}));
}

// Element pairs (offset in each layout) in visiting order, from a walk
// that yields stretches (Pieces or a Nest).
template <std::size_t N>
struct Pairs {
  std::int64_t item;
  std::vector<std::array<std::int64_t, N>> seen;
  void operator()(const std::array<std::int64_t, N>& at, std::uint64_t n) {
    for (std::int64_t b = 0; b < static_cast<std::int64_t>(n); b += item) {
      auto e = at;
      for (auto& x : e) x += b;
      seen.push_back(e);
    }
  }
};

// A random single block of `count` int32 elements: `count` split into up
// to three dims, each stride contiguous, a gap or reversed.
Layout random_block(std::mt19937& rng, std::uint64_t count) {
  std::vector<std::uint64_t> counts;
  std::uint64_t left = count;
  for (int d = 0; d < 2; ++d) {
    std::vector<std::uint64_t> divisors;
    for (std::uint64_t k = 1; k <= left; ++k)
      if (left % k == 0) divisors.push_back(k);
    const std::uint64_t k = divisors[rng() % divisors.size()];
    counts.push_back(k);
    left /= k;
  }
  counts.push_back(left);
  std::vector<Layout::Dim> dims(counts.size());
  std::int64_t span = 4;  // bytes the inner dims cover
  for (std::size_t i = counts.size(); i-- > 0;) {
    const std::int64_t step = span * (rng() % 2 ? 1 : 1 + static_cast<std::int64_t>(rng() % 3));
    dims[i] = {counts[i], rng() % 5 == 0 ? -step : step};
    span = step * static_cast<std::int64_t>(counts[i]);
  }
  return Layout(Dtype::Int32, {{static_cast<std::int64_t>(rng() % 64) * 4, dims}});
}

TEST(Layout, NestVisitsWhatPiecesVisit) {
  std::mt19937 rng(27);
  int nests = 0;
  for (int i = 0; i < 3000; ++i) {
    const std::uint64_t count = 1 + rng() % 48;
    const Layout a = random_block(rng, count), b = random_block(rng, count), c = random_block(rng, count);
    Pairs<2> walked{4, {}}, nested{4, {}};
    detail::Pieces<2>({&a, &b}).for_each(walked);
    if (const auto n = detail::nest_of<2>({&a, &b})) {
      ++nests;
      n->for_each_chunk(nested);
      ASSERT_EQ(nested.seen, walked.seen) << "case " << i;
    }
    Pairs<3> walked3{4, {}}, nested3{4, {}};
    detail::Pieces<3>({&a, nullptr, &c}).for_each(walked3);
    if (const auto n = detail::nest_of<3>({&a, nullptr, &c})) {
      n->for_each_chunk(nested3);
      ASSERT_EQ(nested3.seen, walked3.seen) << "case " << i;
    }
  }
  EXPECT_GT(nests, 2000);  // most random pairs do pair as a nest
}

TEST(Layout, NestOfAColumnIsOneLoopOfElements) {
  // Column 0 of a 1000 x 64 float64 array into column 63 of another.
  const Layout from(Dtype::Float64, {{0, {{1000, 512}}}});
  const Layout to(Dtype::Float64, {{63 * 8, {{1000, 512}}}});
  const auto n = detail::nest_of<2>({&from, &to});
  ASSERT_TRUE(n);
  EXPECT_EQ(n->chunk, 8u);
  EXPECT_EQ(n->dims, 1u);
  EXPECT_EQ(n->count[0], 1000u);
  EXPECT_EQ(n->start[1], 63 * 8);
  // A contiguous origin and a 4 x 8 block of rows: chunks of one row.
  const Layout flat = Layout::contiguous(Dtype::Float64, 32);
  const Layout rows(Dtype::Float64, {{0, {{4, 512}, {8, 8}}}});
  const auto m = detail::nest_of<2>({&flat, &rows});
  ASSERT_TRUE(m);
  EXPECT_EQ(m->chunk, 64u);
  EXPECT_EQ(m->dims, 1u);
  // 2 x 3 against 3 x 2 with gaps: 3 is not a multiple of 2, no nest.
  const Layout p(Dtype::Int32, {{0, {{2, 64}, {3, 8}}}});
  const Layout q(Dtype::Int32, {{0, {{3, 64}, {2, 8}}}});
  EXPECT_FALSE(detail::nest_of<2>({&p, &q}));
  // Copying a nest moves exactly its elements.
  std::vector<double> src(1000 * 64), dst(1000 * 64, -1.0);
  std::iota(src.begin(), src.end(), 0.0);
  detail::copy_nest(reinterpret_cast<std::byte*>(dst.data()), reinterpret_cast<const std::byte*>(src.data()), *n,
                    1, 0);
  for (std::size_t r = 0; r < 1000; ++r)
    for (std::size_t k = 0; k < 64; ++k) ASSERT_EQ(dst[r * 64 + k], k == 63 ? src[r * 64] : -1.0);
}

// ---- between two processes ---------------------------------------------------

// The window of each parameter: its info, whether Create (user memory)
// makes it, and the path that must be chosen. Windows on the provider
// path are made by Create over memory filled before creation, so the
// progress thread (which writes incoming puts) starts after the fill: a
// fill after Allocate would be ordered before those writes only by the
// Fence between, which ThreadSanitizer cannot see through libfabric.
struct Setting {
  Info info;
  bool create;
  const char* path;
};
Setting setting(const std::string& name) {
  if (name == "shared-memory") return {{}, false, "shared-memory"};
  if (name == "cross-memory") return {{}, true, "cross-memory"};
  if (name == "shm") return {{{"provider", "shm"}, {"onesided_shared_memory", "off"}}, true, "provider"};
  return {{{"provider", "tcp;ofi_rxm"}}, true, "provider"};
}

// A window of `bytes` whose memory `fill` has written (before Create, or
// after Allocate, whose memory exists only then).
template <class Fill>
std::unique_ptr<Window> make_window(const Setting& s, std::size_t bytes, std::shared_ptr<Bootstrap> boot,
                                    std::vector<std::int64_t>& memory, Fill&& fill) {
  memory.assign(bytes / 8, 0);
  if (s.create) fill(memory.data());
  auto win = s.create ? Window::create(memory.data(), bytes, 8, s.info, boot) : Window::allocate(bytes, 8, s.info, boot);
  if (!s.create) fill(static_cast<std::int64_t*>(win->base()));
  if (win->path_name() != s.path) throw std::runtime_error("window took path " + win->path_name());
  return win;
}

// Rank 0 puts its 8x6 matrix's column 2 (reversed) into column 4 of rank
// 1's 8x6 matrix, gets part of rank 1's row 3 into every other element of
// a local vector, and accumulates (SUM) a 2x2 tile into rank 1's window; rank 1
// then checks its memory against the same copies done locally.

bool strided_round_trip(int rank, std::shared_ptr<Bootstrap> boot, const Setting& setting) {
  constexpr std::uint64_t kRows = 8, kCols = 6;
  constexpr std::int64_t kRow = kCols * 8;
  std::vector<std::int64_t> memory;
  auto win = make_window(setting, kRows * kCols * 8, boot, memory, [&](std::int64_t* m) {
    for (std::uint64_t i = 0; i < kRows * kCols; ++i) m[i] = static_cast<std::int64_t>(1000 * rank + i);
  });
  auto* mine = static_cast<std::int64_t*>(win->base());
  std::vector<std::int64_t> local(kRows * kCols);
  std::iota(local.begin(), local.end(), 0);
  std::vector<std::int64_t> got(2 * kCols, -1);
  const std::int64_t ones[] = {1, 1, 1, 1};  // origin buffers live until the epoch ends
  win->fence();
  if (rank == 0) {
    const std::uint64_t col[] = {kRows};
    const std::int64_t down[] = {kRow}, up[] = {-kRow};
    // origin: column 2 read bottom-up; target: column 4 top-down
    win->put(local.data(), Layout::strided(Dtype::Int64, 2 * 8 + (kRows - 1) * kRow, col, up), 1, 4,
             Layout::strided(Dtype::Int64, 0, col, down));
    // (columns 0-3 only: column 4 is being put in this epoch)
    const std::uint64_t row[] = {4};
    const std::int64_t every_other[] = {16};
    win->get(got.data(), Layout::strided(Dtype::Int64, 0, row, every_other), 1, 3 * kCols,
             Layout::contiguous(Dtype::Int64, 4));
    const std::uint64_t tile[] = {2, 2};
    const std::int64_t tile_strides[] = {kRow, 8};
    win->accumulate(ones, Layout::contiguous(Dtype::Int64, 4), 1, 0,
                    Layout::strided(Dtype::Int64, 5 * kRow + 1 * 8, tile, tile_strides), Op::Sum);
  }
  win->fence();
  bool ok = true;
  if (rank == 0) {
    for (std::uint64_t j = 0; j < kCols; ++j)
      ok = ok && got[2 * j] == (j < 4 ? static_cast<std::int64_t>(1000 + 3 * kCols + j) : -1) && got[2 * j + 1] == -1;
  } else {
    std::vector<std::int64_t> want(kRows * kCols);
    for (std::uint64_t i = 0; i < kRows * kCols; ++i) want[i] = static_cast<std::int64_t>(1000 + i);
    for (std::uint64_t r = 0; r < kRows; ++r) want[r * kCols + 4] = static_cast<std::int64_t>((kRows - 1 - r) * kCols + 2);
    for (std::uint64_t r = 5; r < 7; ++r)
      for (std::uint64_t c = 1; c < 3; ++c) want[r * kCols + c] += 1;
    ok = std::memcmp(want.data(), mine, want.size() * 8) == 0;
  }
  win->fence(mode::kNoSucceed);
  win->free();
  return ok;
}

class LayoutWindowTest : public ::testing::TestWithParam<const char*> {};

TEST_P(LayoutWindowTest, StridedPutGetAccumulateMatchLocalCopies) {
  const Setting s = setting(GetParam());
  run_pair([&](int rank, std::shared_ptr<Bootstrap> boot) { return strided_round_trip(rank, boot, s); });
}

TEST_P(LayoutWindowTest, LayoutsOutsideTheWindowRaiseBeforeAnythingIsWritten) {
  const Setting s = setting(GetParam());
  run_pair([&](int rank, std::shared_ptr<Bootstrap> boot) {
    std::vector<std::int64_t> memory;
    auto win = make_window(s, 64, boot, memory, [](std::int64_t* m) { std::memset(m, 0x5a, 64); });  // 8 int64
    const std::int64_t v[4] = {1, 2, 3, 4};
    bool ok = true;
    win->fence();
    if (rank == 0) {
      const std::uint64_t n[] = {4};
      const std::int64_t s3[] = {24}, back[] = {-8}, zero[] = {0};
      auto raises = [&](auto&& call, ErrorCategory want) {
        try {
          call();
          return false;
        } catch (const Error& e) {
          return e.category() == want;
        }
      };
      // elements 0, 3, 6, 9: the last one past the end
      ok = ok && raises([&] { win->put(v, Layout::contiguous(Dtype::Int64, 4), 1, 0, Layout::strided(Dtype::Int64, 0, n, s3)); },
                        ErrorCategory::Bounds);
      // backwards from element 2: elements 2, 1, 0, -1
      ok = ok && raises([&] { win->put(v, Layout::contiguous(Dtype::Int64, 4), 1, 2, Layout::strided(Dtype::Int64, 0, n, back)); },
                        ErrorCategory::Bounds);
      ok = ok && raises([&] { win->accumulate(v, Layout::contiguous(Dtype::Int64, 4), 1, 0, Layout::strided(Dtype::Int64, 0, n, zero), Op::Sum); },
                        ErrorCategory::Argument);
      ok = ok && raises([&] { win->put(v, Layout::contiguous(Dtype::Int64, 4), 1, 0, Layout::contiguous(Dtype::Int32, 8)); },
                        ErrorCategory::Argument);
    }
    win->fence();
    const auto* bytes = static_cast<const unsigned char*>(win->base());
    for (int i = 0; i < 64; ++i) ok = ok && bytes[i] == 0x5a;
    win->fence(mode::kNoSucceed);
    win->free();
    return ok;
  });
}

INSTANTIATE_TEST_SUITE_P(Paths, LayoutWindowTest, ::testing::Values("shared-memory", "cross-memory", "shm", "tcp"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
