// Small puts on the cross-memory path wait in a stage per target and reach
// the target together, in one process_vm_writev, at the next flush (or
// before the next other operation to that target): one system call of
// about 1.5 us per put is what limited puts of a few bytes there, where a
// peer that hands them to the target's polling progress pays a fraction.
//
// Invariants:
//  - Memory touched: this rank's stages, which hold copies of the origin's
//    bytes (the origin's buffer is free again when put() returns, as MPI's
//    local completion allows); the target's memory only through the
//    caller's write, at a drain.
//  - Locks: one mutex per target, held from staging to the end of the
//    drain's write, so a drain that returns has written everything staged
//    before it began (a flush in one thread covers the puts of another that
//    returned before it).
//  - Order and completion: a stage drains in staging order (process_vm_writev
//    copies its iovecs in order), and the path drains a target's stage
//    before any other operation to that target, so one origin's operations
//    to one target keep their program order; only remote completion moves,
//    to the drain, which every flush, epoch end and notification makes.
//    A put with a Request is never staged (its Request means complete at
//    the target).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "memory/cross_memory.hpp"

namespace onesided::detail {

class StagedPuts {
 public:
  // A put of at most this many bytes is staged.
  static constexpr std::size_t kLargest = 4096;
  // A stage drains before it would hold more bytes or pieces than these
  // (the second is the kernel's IOV_MAX, one system call's worth).
  static constexpr std::size_t kBytes = 64 << 10, kPieces = 1024;

  explicit StagedPuts(int nranks) : stages_(new Stage[static_cast<std::size_t>(nranks)]) {}

  // Stages `bytes` (<= kLargest) for `remote` at `target`, draining the
  // stage first when it is full. `write(target, pieces)` makes a drain's copy.
  template <class Write>
  void stage(int target, std::uint64_t remote, const void* origin, std::size_t bytes, Write&& write) {
    Stage& s = stages_[static_cast<std::size_t>(target)];
    std::lock_guard lock(s.mutex);
    if (s.data.size() + bytes > kBytes || s.pieces.size() == kPieces) drain_locked(target, s, write);
    if (s.data.capacity() == 0) s.data.reserve(kBytes);  // once: later pieces never move the bytes
    // Each iovec costs the kernel a page walk, so pieces combine where the
    // target could not tell: the same range as the last piece again (the
    // later put wins, as it would at the target), or the range right after
    // it (one longer piece, its bytes already next in the stage).
    if (!s.pieces.empty()) {
      Staged& last = s.pieces.back();
      if (last.remote == remote && last.bytes == bytes) {
        std::memcpy(s.data.data() + last.at, origin, bytes);
        return;
      }
      if (last.remote + last.bytes == remote) {
        append(s, origin, bytes);
        last.bytes += bytes;
        return;
      }
    }
    s.pieces.push_back({remote, append(s, origin, bytes), bytes});
    s.waiting.store(true, std::memory_order_relaxed);
  }

  // Writes what waits for `target` (nothing when the stage is empty: one
  // load, so every other operation may call it first).
  template <class Write>
  void drain(int target, Write&& write) {
    Stage& s = stages_[static_cast<std::size_t>(target)];
    if (!s.waiting.load(std::memory_order_relaxed)) return;  // this thread's own staging is seen in program order
    std::lock_guard lock(s.mutex);
    drain_locked(target, s, write);
  }

 private:
  struct Staged {
    std::uint64_t remote;
    std::size_t at, bytes;  // in Stage::data
  };
  struct Stage {
    std::mutex mutex;
    std::vector<std::byte> data;
    std::vector<Staged> pieces;
    std::atomic<bool> waiting{false};  // a hint for drain(); the truth is `pieces`, under the mutex
  };

  // Where `bytes` copied to the end of the stage begin.
  static std::size_t append(Stage& s, const void* origin, std::size_t bytes) {
    const std::size_t at = s.data.size();
    s.data.resize(at + bytes);
    std::memcpy(s.data.data() + at, origin, bytes);
    return at;
  }

  template <class Write>
  static void drain_locked(int target, Stage& s, Write& write) {
    if (s.pieces.empty()) return;
    std::vector<cma::Piece> pieces;
    pieces.reserve(s.pieces.size());
    for (const Staged& p : s.pieces) pieces.push_back({s.data.data() + p.at, p.remote, p.bytes});
    // Emptied however the write ends: one that raises (a target that died)
    // drops what it could not deliver, as a failed put does.
    struct Emptied {
      Stage& s;
      ~Emptied() {
        s.pieces.clear();
        s.data.clear();
        s.waiting.store(false, std::memory_order_relaxed);
      }
    } emptied{s};
    write(target, std::span<const cma::Piece>(pieces));
  }

  std::unique_ptr<Stage[]> stages_;
};

}  // namespace onesided::detail
