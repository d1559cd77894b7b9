// What the first round of a window's creation (its agreement) tells every
// rank, beyond the verdicts: enough that the rest of the creation needs
// one more round only (the exchange in negotiate()), where it used to take
// one round for each thing it learned (the segment's layout, rank 0's
// file, whether every rank mapped it, who reaches whom by cross-memory
// attach). Every rank decides from the same records. A Create window whose
// memory lies in Alloc_mem blocks at every rank (`places`) adds one round
// (window/create.cpp join_blocks); plain windows never do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "memory/memory_file.hpp"

namespace onesided::detail {

struct Agreed {
  bool same_host = true;      // every rank of the group on this host
  bool shared_memory = true;  // ... and every rank may take the shared-memory path
  std::string host_key;       // this rank's (memory/host_identity.hpp)
  // Every rank's, in rank order: its window's size (Allocate,
  // Allocate_shared, Create; 0 for Create_dynamic), host key and name,
  // pid and window base (Create's memory; 0 elsewhere).
  std::vector<std::size_t> sizes;
  std::vector<std::string> keys, names;
  std::vector<std::int64_t> pids;
  std::vector<std::uint64_t> bases;
  // Create: where each rank's memory lies in an Alloc_mem block
  // (memory/allocated_blocks.hpp place_text); "" for the other flavors.
  std::vector<std::string> places;
  // The file rank 0 made before the round, empty (SharedSegment's step 1):
  // where it is (MemoryFileAddress::text), or "!" and why rank 0 could not
  // make it. The window's shared segment, or its lock segment, maps it.
  std::string offered;
  MemoryFile file;  // rank 0's own, until the segment that maps it takes it
};

}  // namespace onesided::detail
