// The memory of an Allocate_shared window: one POSIX shared-memory object
// mapped by every rank of the group (all on one host), holding each rank's
// segment, so that every rank can load and store every other rank's
// segment directly (Shared_query). Or, joined (joined_segment.cpp), the
// same for a Create window over Alloc_mem memory: a control mapping made
// for the window, and each rank's segment in its own Alloc_mem block,
// which every other rank maps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "memory/allocated_blocks.hpp"
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
  // Collective over `group`, every rank on one host: a `control`-byte
  // mapping made for the window, plus each rank's memory where `places`
  // (every rank's place_text, the same at every rank) says it lies in its
  // Alloc_mem block (this rank's own at `base`), which every other rank
  // maps. Returns null at every rank alike when a rank's memory is in no
  // block or a rank cannot map a peer's block; raises as create() does
  // when the control mapping cannot be made.
  static std::shared_ptr<SharedSegment> join(Bootstrap& group, std::byte* base,
                                             const std::vector<std::string>& places, std::size_t control);
  ~SharedSegment();
  SharedSegment(const SharedSegment&) = delete;
  SharedSegment& operator=(const SharedSegment&) = delete;

  std::byte* base(int rank) const { return bases_[rank]; }
  std::size_t size(int rank) const { return sizes_[rank]; }
  std::byte* control() const { return map_; }
  // A number for `p`, inside `rank`'s segment, that is the same in every
  // process (the CPU atomics' stripe choice): its offset in the one
  // mapping, or, joined, in the rank's block plus rank * 2^40.
  std::uint64_t offset_of(int rank, const std::byte* p) const {
    return keys_[rank] + static_cast<std::uint64_t>(p - bases_[rank]);
  }

 private:
  SharedSegment() = default;
  std::byte* map_ = nullptr;
  std::size_t mapped_ = 0;
  std::vector<std::byte*> bases_;
  std::vector<std::size_t> sizes_;
  std::vector<std::uint64_t> keys_;
  std::vector<std::pair<std::byte*, std::size_t>> peer_maps_;  // joined: the peers' blocks, mapped here
};

}  // namespace onesided::detail
