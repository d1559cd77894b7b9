// Cross-memory atomics: the one atomic path of a cross-memory window
// (cross_memory_path.cpp). The calling rank applies each accumulate-style
// op itself, on the target's memory, instead of asking the target's
// progress engine to: read the elements (process_vm_readv), apply the
// kernels (kernels.cpp) to the copy, write them back (process_vm_writev),
// all under the target's atomic lock, a SharedLock in memory every rank of
// the window maps.
//
// Invariants:
//  - Memory touched: the addressed elements of the target's window (this
//    rank's own by loads and stores), and the target's atomic lock word.
//    Every accumulate-style op on the window's memory, from every rank and
//    for every dtype, comes here and holds that lock, so each is atomic
//    with every other per element; no provider atomic and no target-side
//    kernel ever touches the memory (the ranks agreed on the path at
//    creation).
//  - Lock span: as the software atomics' (software_atomics.cpp): the whole
//    call with mpi_accumulate_granularity 0, else ceil(G / element size)
//    elements per hold; an element is never split across holds.
//  - Order and completion: the op takes effect at the target before its
//    call returns (the lock's release publishes it to the next holder), so
//    every accumulate_ordering pair is kept and nothing is in flight.
//  - Progress: none needed at the target; a target that sleeps costs
//    nothing. A holder that died never unlocks: waiters watch the peers
//    (PeerTable::check_peers) and raise.
#pragma once

#include <memory>

#include "locks/shared_lock.hpp"
#include "paths/data_path.hpp"
#include "state/window_state.hpp"

namespace onesided::detail {

class CrossMemoryAtomics {
 public:
  // `words`: one lock word per rank of the window, in `mapping`.
  CrossMemoryAtomics(WindowState& s, std::shared_ptr<void> mapping, SharedLockWord* words)
      : s_(s), mapping_(std::move(mapping)), words_(words) {}
  void apply(const Where& w, const AtomicCall& call);
  // What win.atomics says about every dtype on such a window.
  static const char* reason();

 private:
  WindowState& s_;
  std::shared_ptr<void> mapping_;  // keeps words_ mapped
  SharedLockWord* words_;
};

}  // namespace onesided::detail
