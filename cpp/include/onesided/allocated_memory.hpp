// Memory from Alloc_mem (MPI_Alloc_mem): zeroed bytes in a shared mapping
// with no name in any file system (a memfd), which other processes on this
// host can map. A Create window over memory lying inside such a block
// (the block, a view of it, a slice) is recognised at creation: when every
// rank's memory is, the ranks map each other's blocks and the window takes
// the shared-memory path, as an Allocate window does.
//
// Guarantees:
//  - Nothing outlives the process, even one killed with SIGKILL: the file
//    has no name, and it goes with the last mapping or descriptor.
//  - The mapping stays valid while any reference to the AllocatedMemory
//    lives (free() withdraws it, the last reference unmaps it), so a view
//    that outlives Free_mem never points into unmapped memory.
//  - free() of memory that a live window exposes raises an Argument error
//    and frees nothing (MPI: window memory stays allocated until the
//    window is freed).
#pragma once

#include <cstddef>
#include <memory>

namespace onesided {

namespace detail {
struct AllocatedAccess;  // the block table (src/memory/allocated_blocks.cpp)
}

class AllocatedMemory {
 public:
  // `size` zeroed bytes, page aligned. Raises an Argument error past the
  // largest a process can map, a Transport error naming the failed call.
  static std::shared_ptr<AllocatedMemory> allocate(std::size_t size);
  ~AllocatedMemory();
  AllocatedMemory(const AllocatedMemory&) = delete;
  AllocatedMemory& operator=(const AllocatedMemory&) = delete;

  std::byte* base() const;
  std::size_t size() const;
  // Free_mem: no window created afterwards recognises this memory; the
  // mapping goes with the last reference. Raises an Argument error when a
  // live window still exposes it, or when it was freed already.
  void free();
  bool freed() const;

  struct Impl;

 private:
  friend struct detail::AllocatedAccess;
  explicit AllocatedMemory(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace onesided
