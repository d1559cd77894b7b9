// Window locks in shared memory: every rank of the window is on this host,
// and every rank's lock word lives in a mapping all of them share (the
// shared-memory path's control page, or a small segment of its own).
//
// Invariants:
//  - Memory touched: the lock words only, by the calling thread, with the
//    atomic instructions of SharedLock (a FIFO reader-writer ticket lock:
//    acquire on lock, release on unlock, so the holder's accesses happen
//    after the previous holder's).
//  - No messages: Lock, Unlock and Lock_all cost atomic instructions, and
//    a contended waiter sleeps on a futex.
//  - Order: Lock_all takes the words in rank order, like any process that
//    takes several locks, so two Lock_alls cannot deadlock.
#include "window/window_lock.hpp"

#include <vector>

namespace onesided::detail {
namespace {

class SharedMemoryLock final : public WindowLock {
 public:
  SharedMemoryLock(WindowState& s, std::shared_ptr<void> mapping, SharedLockWord* words, bool watch)
      : s_(s), mapping_(std::move(mapping)), words_(words), watching_(watch) {
    // Native atomics and (without cross-memory attach) puts need this
    // process to poll while an origin holds its lock, as with lock messages.
    if (watching_)
      s_.endpoint->progress().watch(this, [word = &words_[s_.rank]] { return SharedLock(*word).busy(); });
  }
  ~SharedMemoryLock() override {
    if (watching_) s_.endpoint->progress().unwatch(this);
  }

  const char* where() const override { return "shared memory (atomic instructions, no messages)"; }
  void acquire(int target, bool exclusive) override {
    if (!begin_acquire(target, exclusive)) finish_acquire(target, exclusive);
  }
  void release(int target, bool exclusive) override {
    if (owed_[target]) finish_acquire(target, exclusive);
    SharedLock(words_[target]).unlock(exclusive);
  }
  // The ticket taken waits in tickets_ for finish_acquire: one per target,
  // since a target is locked at most once at a time (epoch.hpp's rules, checked before).
  bool begin_acquire(int target, bool exclusive) override {
    SharedLock lock(words_[target]);
    tickets_[target] = lock.request(exclusive);
    return lock.granted(tickets_[target], exclusive);
  }
  // An interrupted wait leaves the ticket in line (shared_lock.hpp): the
  // lock is still owed, so release() first waits for it, then gives it back.
  void finish_acquire(int target, bool exclusive) override {
    owed_[target] = 1;
    SharedLock(words_[target]).wait(tickets_[target], exclusive, check_);
    owed_[target] = 0;
  }
  // In rank order; an interrupted one has requested ranks [0, requested_all_).
  void acquire_all() override {
    requested_all_ = 0;
    for (int r = 0; r < s_.nranks; ++r) {
      ++requested_all_;
      acquire(r, false);
    }
  }
  void release_all() override {
    for (int r = 0; r < requested_all_; ++r) release(r, false);
  }
  void on_message(const Header&) override {}

 private:
  WindowState& s_;
  // A holder that died never unlocks: waiters watch the peers.
  std::function<void()> check_ = [this] { s_.check_peers(); };
  std::shared_ptr<void> mapping_;  // keeps words_ mapped
  SharedLockWord* words_;
  bool watching_;
  std::vector<std::uint64_t> tickets_ = std::vector<std::uint64_t>(static_cast<std::size_t>(s_.nranks));
  // Written by the thread in the epoch only (Lock then Unlock, in order).
  std::vector<std::uint8_t> owed_ = std::vector<std::uint8_t>(static_cast<std::size_t>(s_.nranks));
  int requested_all_ = 0;
};

}  // namespace

std::unique_ptr<WindowLock> shared_memory_lock(WindowState& state, std::shared_ptr<void> mapping,
                                               SharedLockWord* words, bool watch) {
  return std::make_unique<SharedMemoryLock>(state, std::move(mapping), words, watch);
}

}  // namespace onesided::detail
