// The passive-target window lock of every rank, as an origin takes it. A
// window picks one implementation at creation: in shared memory when every
// rank is on this host and can map it, else by messages to the target.
// In window/, not locks/, because both take the whole window (its peers
// and its data path); locks/ holds the algorithms they are built on.
#pragma once

#include <memory>
#include <string>

#include "locks/shared_lock.hpp"
#include "paths/data_path.hpp"
#include "state/window_state.hpp"

namespace onesided::detail {

class WindowLock {
 public:
  virtual ~WindowLock() = default;
  // For Get_info()["onesided_locks"].
  virtual const char* where() const = 0;
  // Blocks until `target`'s lock is held (shared or exclusive), or released.
  virtual void acquire(int target, bool exclusive) = 0;
  virtual void release(int target, bool exclusive) = 0;
  // acquire() in two steps, for a caller that must do something before it
  // may block: begin_acquire never blocks and returns true when the lock is
  // held; otherwise finish_acquire(target) must follow, and blocks until it
  // is. By default every wait (and all the work) is in finish_acquire.
  virtual bool begin_acquire(int target, bool exclusive) {
    (void)target, (void)exclusive;
    return false;
  }
  virtual void finish_acquire(int target, bool exclusive) { acquire(target, exclusive); }
  // Lock_all / Unlock_all: a shared lock at every rank.
  virtual void acquire_all() = 0;
  virtual void release_all() = 0;
  // The target side of the message protocol (Lock, Unlock and their
  // replies); the shared-memory lock receives none.
  virtual void on_message(const Header& h) = 0;
};

// Every rank's lock word in `words` (nranks of them, in a mapping every
// rank shares). `watch`: this rank's progress thread stays hot while its
// own word is held, for paths whose operations need its progress.
std::unique_ptr<WindowLock> shared_memory_lock(WindowState& state, std::shared_ptr<void> mapping,
                                               SharedLockWord* words, bool watch);
// Locks held in each target's LockTable, reached by messages; `path`
// learns when origins hold this rank's lock.
std::unique_ptr<WindowLock> message_lock(WindowState& state, DataPath& path);

}  // namespace onesided::detail
