// SharedSegment::join: a Create window whose ranks' memory all lies in
// Alloc_mem blocks (memory/allocated_blocks.hpp) becomes, to the window, a
// shared segment like Allocate's: every rank maps every other rank's
// block, so the shared-memory path reaches any rank's memory by loads,
// stores and CPU atomics.
//
// Invariants:
//  - The decision is the group's: every rank learns every rank's place
//    (in the creation's first agreement, window/create.cpp) and whether
//    every rank mapped every block (a round the creation adds only for
//    such windows), and each answers the same from the same data; a rank
//    never takes the path alone.
//  - The control mapping is made as Allocate's is (offer, map: on rank 0's
//    empty file from the agreement), with no segments of its own; join()
//    only adds the peers' blocks, locally.
//  - A peer's block is mapped whole from file offset 0, so the window's
//    memory has the same address modulo the page size in every process:
//    an element's alignment, and so the CPU atomics' choice between a
//    lock-free instruction and a stripe lock, is the same everywhere.
//  - Peers' mappings go with the segment; this rank's own memory stays the
//    caller's (the window's BlockUse holds its block).
#include <sys/mman.h>

#include <cstdio>
#include <string>

#include "memory/memory_file.hpp"
#include "memory/shared_segment.hpp"
#include "onesided/error.hpp"

namespace onesided::detail {

bool SharedSegment::in_blocks(const std::vector<std::string>& places) {
  for (const auto& p : places)
    if (p == "-") return false;
  return true;
}

std::string SharedSegment::join(int me, std::byte* base, const std::vector<std::string>& all) {
  const std::size_t n = all.size();
  bases_.assign(n, nullptr);
  sizes_.assign(n, 0);
  keys_.assign(n, 0);
  for (std::size_t r = 0; r < n; ++r) {
    // Keys 2^40 apart: no block a rank can map reaches the next rank's keys.
    const std::uint64_t key = static_cast<std::uint64_t>(r) << 40;
    const bool mine = r == static_cast<std::size_t>(me);
    if (all[r] == "0") {
      keys_[r] = key;
      if (mine) bases_[r] = base;
      continue;
    }
    std::size_t bytes = 0, offset = 0, len = 0;
    int used = 0;
    if (std::sscanf(all[r].c_str(), "%zu %zu %zu %n", &bytes, &offset, &len, &used) != 3)
      raise(ErrorCategory::Internal, "not a block's place: '" + all[r] + "'");
    sizes_[r] = len;
    keys_[r] = key + offset;
    if (mine) {
      bases_[r] = base;
      continue;
    }
    try {
      const MemoryFile file = MemoryFile::open(MemoryFileAddress::from_text(all[r].substr(static_cast<std::size_t>(used))));
      std::byte* p = file.map(bytes);
      peer_maps_.emplace_back(p, bytes);
      bases_[r] = p + offset;
    } catch (const Error& e) {
      return "rank " + std::to_string(r) + "'s block: " + e.what();
    }
  }
  return "";
}

}  // namespace onesided::detail
