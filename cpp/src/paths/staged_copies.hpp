// Small puts and gets on the cross-memory path wait in a stage per target
// and reach the target together, in one process_vm_writev or readv, at the
// next flush (or before the next other operation to that target): one
// system call of about 1.5 us per op is what limited ops of a few bytes
// there, where a peer that hands them to the target's polling progress
// pays a fraction.
//
// Invariants:
//  - Memory touched: this rank's stages, which hold copies of the origin's
//    bytes of a put (the origin's buffer is free again when the call
//    returns, as MPI's local completion allows) and, for a get, where its
//    result goes; the target's memory, and a get's result buffer, only
//    through the caller's copy, at a drain. A staged get's result buffer
//    must live until the drain: MPI makes it valid only at the next
//    completion point, and the Python window keeps it until then
//    (DataPath::holds_get_results).
//  - Locks: one mutex per target and direction, held from staging to the
//    end of the drain's copy, so a drain that returns has copied everything
//    staged before it began (a flush in one thread covers the puts of
//    another that returned before it).
//  - Order and completion: a stage drains in staging order (process_vm_*
//    copies its iovecs in order), and the path drains a target's stages
//    before any other operation to that target, and one direction's before
//    staging the other's, so one origin's operations to one target keep
//    their program order; only completion moves, to the drain, which every
//    flush, epoch end and notification makes. An op with a Request is
//    never staged (its Request means complete at the target).
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

class StagedCopies {
 public:
  // An op of at most this many bytes is staged.
  static constexpr std::size_t kLargest = 4096;
  // A stage drains before it would hold more bytes (of puts) or pieces
  // than these (the second is the kernel's IOV_MAX, one system call's worth).
  static constexpr std::size_t kBytes = 64 << 10, kPieces = 1024;

  explicit StagedCopies(int nranks) : stages_(new Stage[static_cast<std::size_t>(nranks)]) {}

  // Stages a put of `bytes` (<= kLargest) to `remote` at `target`, its
  // bytes copied now, draining the stage first when it is full.
  // `copy(target, pieces)` makes a drain's copy.
  template <class Copy>
  void put(int target, std::uint64_t remote, const void* origin, std::size_t bytes, Copy&& copy) {
    Stage& s = stages_[static_cast<std::size_t>(target)];
    std::lock_guard lock(s.mutex);
    if (s.data.size() + bytes > kBytes || s.pieces.size() == kPieces) drain_locked(target, s, copy);
    if (s.data.capacity() == 0) s.data.reserve(kBytes);  // once: later puts never move the bytes
    // The same range as the last piece again: the later put wins, as it
    // would at the target.
    if (!s.pieces.empty() && s.pieces.back().remote == remote && s.pieces.back().bytes == bytes)
      return (void)std::memcpy(s.pieces.back().local, origin, bytes);
    const std::size_t at = s.data.size();
    s.data.resize(at + bytes);
    std::memcpy(s.data.data() + at, origin, bytes);
    push(s, {s.data.data() + at, remote, bytes});
  }

  // Stages a get of `bytes` (<= kLargest) from `remote` at `target` into
  // `result`, which the caller keeps until the drain.
  template <class Copy>
  void get(int target, std::uint64_t remote, void* result, std::size_t bytes, Copy&& copy) {
    Stage& s = stages_[static_cast<std::size_t>(target)];
    std::lock_guard lock(s.mutex);
    if (s.pieces.size() == kPieces) drain_locked(target, s, copy);
    // The same range into the same result as the last piece: every staged
    // get reads at the drain, so reading it twice reads the same bytes.
    if (!s.pieces.empty()) {
      const cma::Piece& last = s.pieces.back();
      if (last.remote == remote && last.bytes == bytes && last.local == result) return;
    }
    push(s, {result, remote, bytes});
  }

  // Copies what waits for `target` (nothing when the stage is empty: one
  // load, so every other operation may call it first).
  template <class Copy>
  void drain(int target, Copy&& copy) {
    Stage& s = stages_[static_cast<std::size_t>(target)];
    if (!s.waiting.load(std::memory_order_relaxed)) return;  // this thread's own staging is seen in program order
    std::lock_guard lock(s.mutex);
    drain_locked(target, s, copy);
  }

 private:
  struct Stage {
    std::mutex mutex;
    std::vector<std::byte> data;  // the bytes of staged puts
    std::vector<cma::Piece> pieces;
    std::atomic<bool> waiting{false};  // a hint for drain(); the truth is `pieces`, under the mutex
  };

  // Each iovec costs the kernel a page walk, so a piece that continues the
  // last one on both sides (the next range there, the next bytes here)
  // extends it.
  static void push(Stage& s, const cma::Piece& p) {
    if (!s.pieces.empty()) {
      cma::Piece& last = s.pieces.back();
      if (last.remote + last.bytes == p.remote && static_cast<std::byte*>(last.local) + last.bytes == p.local) {
        last.bytes += p.bytes;
        return;
      }
    }
    s.pieces.push_back(p);
    s.waiting.store(true, std::memory_order_relaxed);
  }

  template <class Copy>
  static void drain_locked(int target, Stage& s, Copy& copy) {
    if (s.pieces.empty()) return;
    // Emptied however the copy ends: one that raises (a target that died)
    // drops what it could not deliver, as a failed op does.
    struct Emptied {
      Stage& s;
      ~Emptied() {
        s.pieces.clear();
        s.data.clear();
        s.waiting.store(false, std::memory_order_relaxed);
      }
    } emptied{s};
    copy(target, std::span<const cma::Piece>(s.pieces));
  }

  std::unique_ptr<Stage[]> stages_;
};

}  // namespace onesided::detail
