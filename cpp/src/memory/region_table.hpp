// The regions a rank has attached to a dynamic window (Create_dynamic +
// Attach): where each lies in the rank's address space and how origins
// reach it. Targets on a dynamic window are absolute addresses, so an
// origin looks the address up in its copy of the target's table.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/remote_region.hpp"

namespace onesided::detail {

struct AttachedRegion {
  std::uint64_t base = 0, len = 0;  // [base, base + len) in the owner's address space
  RemoteRegion remote;              // how the provider addresses byte `base`
};

// Which of `n` regions, sorted by base and disjoint (`region(i)` gives
// region i's {base, len}), hold [addr, addr + len) together: {first, count},
// each starting where the one before ends; count 0 when a byte of the range
// is in none. count is 1 exactly when one region holds the whole range.
// Overflow-safe for any arguments; bounded by n steps whatever `region`
// returns (a reader of a table that changes under it checks afterwards).
template <class Region>
std::pair<std::size_t, std::size_t> covering(std::size_t n, Region&& region, std::uint64_t addr, std::uint64_t len) {
  std::size_t lo = 0, hi = n;  // the first region starting after addr
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (region(mid).first <= addr) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return {0, 0};
  const std::size_t first = lo - 1;
  auto [base, size] = region(first);
  const std::uint64_t off = addr - base;  // addr >= base here
  if (off <= size && len <= size - off) return {first, 1};
  if (off >= size) return {0, 0};  // addr is past the region before it
  std::uint64_t left = len - (size - off);
  std::size_t count = 1;
  for (; left > 0; ++count) {
    if (first + count >= n) return {0, 0};
    const auto [next, next_size] = region(first + count);
    if (next != base + size) return {0, 0};  // a gap
    left -= std::min(left, next_size);
    base = next, size = next_size;
  }
  return {first, count};
}

class RegionTable {
 public:
  // Raises an Argument error when [base, base + len) overlaps an attached region.
  void add(const AttachedRegion& r);
  // False when no region starts at `base`.
  bool remove(std::uint64_t base);
  // The region holding all of [addr, addr + len), or null.
  const AttachedRegion* find(std::uint64_t addr, std::uint64_t len) const;
  // The regions that together hold all of [addr, addr + len), in address
  // order, each starting where the one before ends (regions attached side
  // by side); empty when a byte of the range is not attached.
  std::vector<AttachedRegion> cover(std::uint64_t addr, std::uint64_t len) const;
  bool empty() const { return regions_.empty(); }
  const std::vector<AttachedRegion>& regions() const { return regions_; }
  std::size_t size() const { return regions_.size(); }

  std::string bytes() const;
  static RegionTable from_bytes(std::string_view bytes);

 private:
  std::pair<std::size_t, std::size_t> covering_of(std::uint64_t addr, std::uint64_t len) const;
  std::vector<AttachedRegion> regions_;  // sorted by base, disjoint
};

}  // namespace onesided::detail
