// The Alloc_mem blocks of this process (onesided/allocated_memory.hpp),
// findable by address: how a Create window learns that its memory lies in
// a block its peers can map.
//
// Invariants:
//  - The table holds the blocks allocated and not yet freed, under one
//    mutex; a block leaves it at free() or when its last reference goes.
//  - A BlockUse counts as a window exposing the block: while one lives,
//    free() raises, and the block stays mapped (the use holds it).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "memory/memory_file.hpp"

namespace onesided::detail {

// Where a range of this process's memory lies in its block.
struct BlockPlace {
  MemoryFileAddress file;       // how a peer on this host opens the block
  std::size_t block_bytes = 0;  // how much of it a peer maps
  std::size_t offset = 0;       // where the range starts in it
};

struct BlockUse {
  BlockPlace place;
  std::shared_ptr<void> use;  // the window's hold on the block
};

// A rank's place as the others learn it at a Create window's creation:
// "0" for no memory, "-" for memory in no block, else the block's mapped
// size, the window's offset and size in it, and the file's address.
std::string place_text(std::size_t size, const BlockPlace* place);

// The unfreed block that holds all of [base, base + len) (len >= 1), with
// a use of it; nullopt when none does.
std::optional<BlockUse> use_allocated(const void* base, std::size_t len);

}  // namespace onesided::detail
