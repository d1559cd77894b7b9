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

  // Joined (joined_segment.cpp): a Create window over Alloc_mem memory.
  // `in_blocks`: from `places` (every rank's place_text, learned in the
  // creation's agreement, the same at every rank), does every rank's
  // memory lie in a block (or is it empty)? Only then is `join` worth a try.
  static bool in_blocks(const std::vector<std::string>& places);
  // On a segment `map`ped with no segments of its own (its mapping is the
  // window's control bytes), maps every other rank's block where `places`
  // says it lies (this rank's own memory stays at `base`). Local: returns
  // what failed ("" when every block mapped), this rank's alone; the
  // caller's later round tells every rank, and a rank takes the
  // shared-memory path only if every rank mapped every block.
  std::string join(int rank, std::byte* base, const std::vector<std::string>& places);
  // Rank 0's descriptor back out of a segment that is given up before
  // mapped_everywhere (a join some rank failed), so another segment can
  // map the same file (the window's lock segment).
  MemoryFile take_file() { return std::move(file_); }
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
  // Each rank's segment: in the one mapping (at its offset, which is its
  // key), or, joined, in its own block (key: rank * 2^40 + its offset there).
  std::vector<std::byte*> bases_;
  std::vector<std::size_t> sizes_;
  std::vector<std::uint64_t> keys_;
  std::vector<std::pair<std::byte*, std::size_t>> peer_maps_;  // joined: the peers' blocks, mapped here
  MemoryFile file_;  // rank 0's descriptor, until every rank has opened the file
};

// Raises an Argument error, at every rank alike (the same data), unless
// every rank's host key is the first's; `what` names the call that needs it.
void check_one_host(const std::vector<std::string>& keys, const std::vector<std::string>& names, const char* what);

}  // namespace onesided::detail
