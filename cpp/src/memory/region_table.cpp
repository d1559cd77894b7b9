#include "memory/region_table.hpp"

#include <algorithm>
#include <cstring>

#include "onesided/error.hpp"

namespace onesided::detail {

void RegionTable::add(const AttachedRegion& r) {
  auto at = std::lower_bound(regions_.begin(), regions_.end(), r.base,
                             [](const AttachedRegion& a, std::uint64_t b) { return a.base < b; });
  const bool overlaps_next = at != regions_.end() && at->base < r.base + r.len;
  const bool overlaps_prev = at != regions_.begin() && std::prev(at)->base + std::prev(at)->len > r.base;
  if (overlaps_next || overlaps_prev || (at != regions_.end() && at->base == r.base))
    raise(ErrorCategory::Argument, "Attach: the memory overlaps memory already attached to this window");
  regions_.insert(at, r);
}

bool RegionTable::remove(std::uint64_t base) {
  auto at = std::find_if(regions_.begin(), regions_.end(), [&](const AttachedRegion& a) { return a.base == base; });
  if (at == regions_.end()) return false;
  regions_.erase(at);
  return true;
}

std::pair<std::size_t, std::size_t> RegionTable::covering_of(std::uint64_t addr, std::uint64_t len) const {
  return covering(
      regions_.size(), [this](std::size_t i) { return std::pair{regions_[i].base, regions_[i].len}; }, addr, len);
}

const AttachedRegion* RegionTable::find(std::uint64_t addr, std::uint64_t len) const {
  const auto [first, count] = covering_of(addr, len);
  return count == 1 ? &regions_[first] : nullptr;
}

std::vector<AttachedRegion> RegionTable::cover(std::uint64_t addr, std::uint64_t len) const {
  const auto [first, count] = covering_of(addr, len);
  return {regions_.begin() + static_cast<std::ptrdiff_t>(first),
          regions_.begin() + static_cast<std::ptrdiff_t>(first + count)};
}

std::string RegionTable::bytes() const {
  return std::string(reinterpret_cast<const char*>(regions_.data()), regions_.size() * sizeof(AttachedRegion));
}

RegionTable RegionTable::from_bytes(std::string_view bytes) {
  RegionTable t;
  if (bytes.size() % sizeof(AttachedRegion) != 0) raise(ErrorCategory::Internal, "bad region table");
  t.regions_.resize(bytes.size() / sizeof(AttachedRegion));
  std::memcpy(t.regions_.data(), bytes.data(), bytes.size());
  return t;
}

}  // namespace onesided::detail
