// SharedSegment::join: a Create window whose ranks' memory all lies in
// Alloc_mem blocks (memory/allocated_blocks.hpp) becomes, to the window, a
// shared segment like Allocate's: every rank maps every other rank's
// block, so the shared-memory path reaches any rank's memory by loads,
// stores and CPU atomics.
//
// Invariants:
//  - The decision is the group's: every rank learns every rank's place
//    (in the creation's first agreement, window/create.cpp) and whether
//    every rank mapped every block (one allgather here), and each answers
//    the same from the same data; a rank never takes the path alone.
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

std::shared_ptr<SharedSegment> SharedSegment::join(Bootstrap& group, std::byte* base,
                                                   const std::vector<std::string>& all, std::size_t control) {
  const int n = group.size(), me = group.rank();
  for (const auto& a : all)
    if (a == "-") return nullptr;
  auto seg = create(group, 0, false, control);
  seg->bases_.assign(static_cast<std::size_t>(n), nullptr);
  seg->sizes_.assign(static_cast<std::size_t>(n), 0);
  seg->keys_.assign(static_cast<std::size_t>(n), 0);
  std::string failed;
  for (int r = 0; r < n; ++r) {
    const std::uint64_t key = static_cast<std::uint64_t>(r) << 40;
    if (all[r] == "0") {
      seg->keys_[r] = key;
      if (r == me) seg->bases_[r] = base;
      continue;
    }
    std::size_t bytes = 0, offset = 0, len = 0;
    int used = 0;
    if (std::sscanf(all[r].c_str(), "%zu %zu %zu %n", &bytes, &offset, &len, &used) != 3)
      raise(ErrorCategory::Internal, "not a block's place: '" + all[r] + "'");
    seg->sizes_[r] = len;
    seg->keys_[r] = key + offset;
    if (r == me) {
      seg->bases_[r] = base;
      continue;
    }
    if (!failed.empty()) continue;
    try {
      const MemoryFile file = MemoryFile::open(MemoryFileAddress::from_text(all[r].substr(static_cast<std::size_t>(used))));
      std::byte* p = file.map(bytes);
      seg->peer_maps_.emplace_back(p, bytes);
      seg->bases_[r] = p + offset;
    } catch (const Error& e) {
      failed = "rank " + std::to_string(r) + "'s block: " + e.what();
    }
  }
  // Every rank mapped every block, or none takes the path (the segment,
  // and with it what was mapped, goes).
  for (const auto& a : group.allgather(failed))
    if (!a.empty()) return nullptr;
  return seg;
}

}  // namespace onesided::detail
