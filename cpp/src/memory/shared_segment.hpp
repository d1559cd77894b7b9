// The memory of an Allocate_shared window: one POSIX shared-memory object
// mapped by every rank of the group (all on one host), holding each rank's
// segment, so that every rank can load and store every other rank's
// segment directly (Shared_query).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "memory/memory_file.hpp"
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

  // create()'s steps, for a caller that carries them in rounds of its own
  // (window creation: in its agreement and its exchange, so that a window
  // costs no rounds for its memory):
  //  1. before a round, rank 0 makes the file, empty (`offer`: its size is
  //     known only once every rank's is); the round carries every rank's
  //     size and host and rank 0's address;
  //  2. every rank lays the segments out from the same data (`Layout`,
  //     raising alike at every rank), then `map`s the file, sizing it
  //     itself (every rank sets the same size, in any order);
  //  3. a later round says every rank has mapped (or which failed): then
  //     rank 0 closes its descriptor (`mapped_everywhere`).
  struct Layout {
    std::vector<std::size_t> offsets, sizes;
    std::size_t mapped = 0;  // bytes of the mapping (at least one)
    // Raises an Argument error when the segments add up to more than one
    // mapping can hold: from the same sizes, at every rank alike.
    Layout(const std::vector<std::size_t>& sizes, bool noncontig, std::size_t control);
  };
  static MemoryFile offer();
  // `file`: rank 0's own (moved in: the segment keeps it until
  // mapped_everywhere); elsewhere empty, and the file is opened at `at`.
  // Local: a Transport error raised here is this rank's alone.
  static std::shared_ptr<SharedSegment> map(const Layout& layout, MemoryFile file, const MemoryFileAddress& at);
  void mapped_everywhere() { file_.close(); }
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
  MemoryFile file_;  // rank 0's descriptor, until every rank has opened the file
};

// Raises an Argument error, at every rank alike (the same data), unless
// every rank's host key is the first's; `what` names the call that needs it.
void check_one_host(const std::vector<std::string>& keys, const std::vector<std::string>& names, const char* what);

}  // namespace onesided::detail
