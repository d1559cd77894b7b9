// The rows: the operations measured, the target cells they touch, the
// origin's model of those cells, and the timed loop written once for every
// column.
#pragma once

#include <array>
#include <cstdint>
#include <iterator>
#include <string>

namespace onesided_bench {

enum class Row { Put, Get, Accumulate, GetAccumulate, FetchAndOp, CompareAndSwap, Rmw, Rmw2 };
struct RowInfo {
  Row row;
  const char* name;
};
inline constexpr RowInfo kRows[] = {
    {Row::Put, "put 8 B"},
    {Row::Get, "get 8 B"},
    {Row::Accumulate, "accumulate SUM int64"},
    {Row::GetAccumulate, "get_accumulate SUM int64"},
    {Row::FetchAndOp, "fetch_and_op SUM int64"},
    {Row::CompareAndSwap, "compare_and_swap int64"},
    {Row::Rmw, "rmw INC int64"},
    {Row::Rmw2, "rmw2 MASK_SWAP int64"},
};
inline constexpr int kNumRows = static_cast<int>(std::size(kRows));

// Target cells: 0 put/get, 1 the SUM/INC counter, 2 the compare-and-swap
// chain, 3 the mask-swap chain. The origin keeps what they must hold.
enum Cell : int { kPutCell = 0, kSumCell = 1, kCasCell = 2, kMswapCell = 3, kCellsUsed = 4 };
struct Model {
  std::int64_t put = 0, sum = 0, cas = 0, mswap = 0;
  std::array<std::int64_t, kCellsUsed> cells() const { return {put, sum, cas, mswap}; }
};

struct Checker {
  long failures = 0;
  std::string first;
  void fail(const char* what, std::int64_t got, std::int64_t want) {
    if (failures++ == 0)
      first = std::string(what) + " returned " + std::to_string(got) + ", expected " + std::to_string(want);
  }
};

// The timed loop, written once for every column: `ops` does one operation
// plus its completion (flush). Inlined per column type.
template <class Ops>
void run_row(Ops& ops, Row row, long n, Model& m, Checker& c) {
  switch (row) {
    case Row::Put:
      for (long i = 0; i < n; ++i) ops.put(++m.put, kPutCell);
      break;
    case Row::Get:
      for (long i = 0; i < n; ++i)
        if (const auto r = ops.get(kPutCell); r != m.put) [[unlikely]] c.fail("get", r, m.put);
      break;
    case Row::Accumulate:
      for (long i = 0; i < n; ++i) {
        ops.accumulate(1, kSumCell);
        ++m.sum;
      }
      break;
    case Row::GetAccumulate:
      for (long i = 0; i < n; ++i, ++m.sum)
        if (const auto r = ops.get_accumulate(1, kSumCell); r != m.sum) [[unlikely]] c.fail("get_accumulate", r, m.sum);
      break;
    case Row::FetchAndOp:
      for (long i = 0; i < n; ++i, ++m.sum)
        if (const auto r = ops.fetch_and_op(1, kSumCell); r != m.sum) [[unlikely]] c.fail("fetch_and_op", r, m.sum);
      break;
    case Row::CompareAndSwap:
      for (long i = 0; i < n; ++i, ++m.cas)
        if (const auto r = ops.cas(m.cas, m.cas + 1, kCasCell); r != m.cas) [[unlikely]] c.fail("compare_and_swap", r, m.cas);
      break;
    case Row::Rmw:
      for (long i = 0; i < n; ++i, ++m.sum)
        if (const auto r = ops.rmw_inc(kSumCell); r != m.sum) [[unlikely]] c.fail("rmw INC", r, m.sum);
      break;
    case Row::Rmw2:
      for (long i = 0; i < n; ++i, ++m.mswap)
        if (const auto r = ops.mswap(~std::int64_t{0}, m.mswap + 1, kMswapCell); r != m.mswap) [[unlikely]]
          c.fail("rmw2 MASK_SWAP", r, m.mswap);
      break;
  }
}

}  // namespace onesided_bench
