// How a rank's plain stores into memory that other processes map (the
// shared-memory path's puts, a rank's own stores into an Allocate_shared
// segment) become visible to the rank that learns of them through a
// synchronisation: each rank has a publication word, and the ordering rides
// on it, not on standalone fences (which ThreadSanitizer cannot see and the
// C++ memory model only honours through some atomic both sides touch).
//
// Invariants:
//  - Who writes: rank r's word is incremented only by rank r's threads
//    (publish(), a release read-modify-write), so publishing never contends
//    with other ranks; every rank reads every word (take(), acquire loads).
//  - Why it orders: every write to a word is a read-modify-write, so each
//    later value heads a release sequence containing every earlier publish;
//    a take() that runs after the synchronisation through which it learnt of
//    rank r's publish reads that increment or a later one, and so
//    synchronises with it: rank r's stores before publish() happen before
//    the taker's loads after take().
//  - Where: in the shared mapping's control page when the window has one
//    (every rank maps it), else in this process (no other process stores
//    into this window's memory directly; libfabric's and the kernel's
//    deliveries are ordered by the progress engine's observe()).
//  - Who calls: Flush on the shared-memory path publishes (paths/
//    shared_memory_path.cpp); Fence, Post, Complete publish before they
//    signal and Fence, Start (on matching a Post), Wait and Test take after
//    they learn (window/active.cpp). Lock and Unlock need neither: the lock
//    word is itself the signal and is acquired and released (locks/
//    shared_lock.cpp, or the lock messages through the progress engine).
//    Notified RMA's counters are released after the data and acquired by
//    the reader. Win_sync keeps the one standalone fence (window/active.cpp).
//  - Not taken: an origin's RMA on the shared-memory path (a Get is a plain
//    copy) after the user's own barrier with no onesided call between takes
//    nothing; as before this word, it relies on that barrier ordering its
//    later loads (an MPI barrier and every system call do). Taking every
//    rank's word in each Get would cost more than the Get.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace onesided::detail {

// One rank's word, on a cache line of its own.
struct alignas(64) PublicationWord {
  std::atomic<std::uint64_t> count{0};
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "publication words in shared memory need lock-free words");

class Publication {
 public:
  Publication() = default;
  // `words`: nranks words (in a shared mapping, or owned when `owned`).
  Publication(PublicationWord* words, int nranks, int rank) : words_(words), nranks_(nranks), rank_(rank) {}
  static Publication owned(int nranks, int rank) {
    Publication p;
    p.owned_ = std::make_unique<PublicationWord[]>(static_cast<std::size_t>(nranks));
    p.words_ = p.owned_.get();
    p.nranks_ = nranks;
    p.rank_ = rank;
    return p;
  }

  // This rank's stores so far are visible to whoever take()s after learning of this call.
  void publish() const { words_[rank_].count.fetch_add(1, std::memory_order_release); }
  // The word publish() increments, for a caller that publishes inline
  // (onesided/epoch.hpp): the same release increment, on the same word.
  std::atomic<std::uint64_t>* own_word() const { return &words_[rank_].count; }
  // Every rank's stores before the publish() this rank has learnt of are visible to its loads after this call.
  void take() const {
    for (int r = 0; r < nranks_; ++r) (void)words_[r].count.load(std::memory_order_acquire);
  }
  // Win_sync: publish() and take() in one, this rank's word read and
  // written by one acq_rel read-modify-write, which also takes what this
  // process's other threads published (window/active.cpp says why).
  void publish_and_take() const {
    words_[rank_].count.fetch_add(1, std::memory_order_acq_rel);
    for (int r = 0; r < nranks_; ++r)
      if (r != rank_) (void)words_[r].count.load(std::memory_order_acquire);
  }

 private:
  std::unique_ptr<PublicationWord[]> owned_;
  PublicationWord* words_ = nullptr;
  int nranks_ = 0;
  int rank_ = 0;
};

}  // namespace onesided::detail
