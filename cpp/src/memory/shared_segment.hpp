// The memory of an Allocate_shared window: one POSIX shared-memory object
// mapped by every rank of the group (all on one host), holding each rank's
// segment, so that every rank can load and store every other rank's
// segment directly (Shared_query).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "onesided/bootstrap.hpp"

namespace onesided::detail {

class SharedSegment {
 public:
  // Collective over `group`: rank r contributes `size` bytes. Segments are
  // laid out in rank order, back to back (`noncontig`: each starting on a
  // page boundary). The memory starts zeroed. Raises an Argument error at
  // every rank when the ranks are not on one host, a Transport error when
  // the shared object cannot be made or mapped. `control` bytes (zeroed,
  // page-aligned, before every segment) are for onesided's own use.
  static std::shared_ptr<SharedSegment> create(Bootstrap& group, std::size_t size, bool noncontig,
                                               std::size_t control = 0);
  ~SharedSegment();
  SharedSegment(const SharedSegment&) = delete;
  SharedSegment& operator=(const SharedSegment&) = delete;

  std::byte* base(int rank) const { return map_ + offsets_[rank]; }
  std::size_t size(int rank) const { return sizes_[rank]; }
  std::byte* control() const { return map_; }
  // Offset of `p` (inside the mapping) from its start: the same in every process.
  std::uint64_t offset_of(const std::byte* p) const { return static_cast<std::uint64_t>(p - map_); }

 private:
  SharedSegment() = default;
  std::byte* map_ = nullptr;
  std::size_t mapped_ = 0;
  std::vector<std::size_t> offsets_, sizes_;
};

}  // namespace onesided::detail
