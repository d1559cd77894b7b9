// How an origin learns which regions a target has attached to a dynamic
// window, chosen at creation (window/create.cpp):
//  - fetched: asked of the target by message (any provider), once per
//    target per access epoch and again on a miss: one round trip to the
//    target's progress engine;
//  - published: read from the table each rank keeps in shared memory
//    (memory/published_regions.hpp; one host, the cross-memory path): no
//    message and no progress at the target.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "memory/published_regions.hpp"
#include "memory/region_table.hpp"
#include "state/window_state.hpp"

namespace onesided::detail {

class RegionDirectory {
 public:
  virtual ~RegionDirectory() = default;
  // The regions of `target` (another rank) that together hold
  // [addr, addr + bytes), as RegionTable::cover.
  virtual std::vector<AttachedRegion> cover(int target, std::uint64_t addr, std::size_t bytes) = 0;
  // An access epoch begins: what this rank knows of others may be out of date.
  virtual void epoch_started() = 0;
  // This rank's own table is now `mine` (Attach, Detach; the caller holds
  // its table's lock). After a Detach, when this returns, no origin touches
  // the detached memory any more.
  virtual void changed(const RegionTable& mine) = 0;
  // A RegionsReply message (an answer to a fetch).
  virtual void reply(const Header& h, const std::byte* payload, std::size_t len) = 0;
};

std::unique_ptr<RegionDirectory> fetched_regions(WindowState& state);
std::unique_ptr<RegionDirectory> published_regions(WindowState& state, std::shared_ptr<PublishedRegions> table);

}  // namespace onesided::detail
