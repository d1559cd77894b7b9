// The regions a rank has attached to a dynamic window (Create_dynamic +
// Attach): where each lies in the rank's address space and how origins
// reach it. Targets on a dynamic window are absolute addresses, so an
// origin looks the address up in its copy of the target's table.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/remote_region.hpp"

namespace onesided::detail {

struct AttachedRegion {
  std::uint64_t base = 0, len = 0;  // [base, base + len) in the owner's address space
  RemoteRegion remote;              // how the provider addresses byte `base`
};

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
  std::size_t size() const { return regions_.size(); }

  std::string bytes() const;
  static RegionTable from_bytes(std::string_view bytes);

 private:
  std::vector<AttachedRegion> regions_;  // sorted by base, disjoint
};

}  // namespace onesided::detail
