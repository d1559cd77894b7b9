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

const AttachedRegion* RegionTable::find(std::uint64_t addr, std::uint64_t len) const {
  auto at = std::upper_bound(regions_.begin(), regions_.end(), addr,
                             [](std::uint64_t a, const AttachedRegion& r) { return a < r.base; });
  if (at == regions_.begin()) return nullptr;
  const AttachedRegion& r = *std::prev(at);
  // addr >= r.base here; overflow-safe containment of [addr, addr + len).
  if (addr - r.base > r.len || len > r.len - (addr - r.base)) return nullptr;
  return &r;
}

std::vector<AttachedRegion> RegionTable::cover(std::uint64_t addr, std::uint64_t len) const {
  if (const auto* r = find(addr, len)) return {*r};
  auto at = std::upper_bound(regions_.begin(), regions_.end(), addr,
                             [](std::uint64_t a, const AttachedRegion& r) { return a < r.base; });
  if (at == regions_.begin()) return {};
  auto r = std::prev(at);
  if (addr - r->base >= r->len) return {};  // addr is past the region before it
  std::vector<AttachedRegion> out{*r};
  // The bytes still to cover once the regions so far are; overflow-safe
  // (find failed, so the range runs past the first region's end).
  std::uint64_t left = len - (r->len - (addr - r->base));
  for (auto next = std::next(r); left > 0; r = next++) {
    if (next == regions_.end() || next->base != r->base + r->len) return {};
    out.push_back(*next);
    left -= std::min(left, next->len);
  }
  return out;
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
