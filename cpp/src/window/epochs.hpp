// The origin's epoch bookkeeping (epoch.hpp's rules) and what each open
// epoch remembers, under one mutex: any thread may open, use or close
// epochs, so every member here is read and written under `mutex`, but for
// the atomic mirror at the end, which is written under it and read without.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "window/epoch.hpp"

namespace onesided::detail {

struct Epochs {
  explicit Epochs(int nranks)
      : state(nranks),
        nocheck(static_cast<std::size_t>(nranks), 0),
        exclusive(static_cast<std::size_t>(nranks), 0),
        post_matched(static_cast<std::size_t>(nranks), 0) {}

  static constexpr std::uint8_t kCompleted = 2;
  std::mutex mutex;
  EpochState state;
  // Per target (bytes, not vector<bool>, so threads locking different
  // targets touch different memory): locked with MODE_NOCHECK; held exclusively.
  std::vector<std::uint8_t> nocheck, exclusive;
  bool lock_all_nocheck = false;
  // The open access epoch (Start) has matched that target's Post (1), or
  // has also sent it Complete (kCompleted: an interrupted Complete resumes).
  std::vector<std::uint8_t> post_matched;

  // A lock-free mirror of one rule of `state`: a passive-target epoch (Lock
  // on the target, or Lock_all) grants access to it. Written under `mutex`
  // by whoever opens or closes such an epoch (mirror, right after the
  // state changes), read without it by every RMA call (grants), so the
  // common call takes no mutex: the state is decided once per epoch, not
  // per call. Fence and Start epochs are not mirrored (a fence records
  // that it was used, a Start matches Posts): those calls take the mutex.
  std::unique_ptr<std::atomic<std::uint8_t>[]> passive =
      std::make_unique<std::atomic<std::uint8_t>[]>(post_matched.size());
  std::atomic<bool> passive_all{false};

  void mirror(int target) {
    passive[static_cast<std::size_t>(target)].store(state.locked(target), std::memory_order_release);
  }
  void mirror_all() { passive_all.store(state.lock_all(), std::memory_order_release); }
  bool grants(int target) const {
    return passive_all.load(std::memory_order_acquire) ||
           passive[static_cast<std::size_t>(target)].load(std::memory_order_acquire);
  }

  // What Epoch handles (onesided/epoch.hpp) compare on every call: one
  // counter per target, bumped when a lock on it closes, and one more
  // ([nranks]) bumped when Lock_all's epoch closes; free() bumps them all.
  // Written under `mutex` where the epoch state changes, read without it
  // (relaxed: only whether the handle's epoch has ended depends on it, and
  // a thread that learnt of the close through any synchronisation, or
  // closed it itself, reads the bump by coherence).
  std::unique_ptr<std::atomic<std::uint64_t>[]> generation =
      std::make_unique<std::atomic<std::uint64_t>[]>(post_matched.size() + 1);
  void close_handles(int target) {
    generation[static_cast<std::size_t>(target)].fetch_add(1, std::memory_order_relaxed);
  }
  void close_handles_all() { generation[post_matched.size()].fetch_add(1, std::memory_order_relaxed); }
  void close_every_handle() {
    for (std::size_t t = 0; t <= post_matched.size(); ++t) generation[t].fetch_add(1, std::memory_order_relaxed);
  }
};

}  // namespace onesided::detail
