// The window lock of one target on the shared-memory path, kept in the
// shared memory every rank maps instead of at the target's progress engine:
// a lock epoch then costs two atomic instructions when uncontended, not two
// message round trips.
//
// It is Mellor-Crummey and Scott's fair reader-writer ticket lock, so it
// grants in arrival order like the message path's LockTable: an exclusive
// locker waits for everyone who arrived before it, a shared locker only for
// the exclusive lockers who arrived before it, and a stream of shared
// lockers cannot starve an exclusive one.
//
// Waiters spin briefly, then yield, then sleep on a futex, so a rank waiting
// for a lock never takes a core from the holder (ranks may outnumber cores).
#pragma once

#include <functional>

#include <cstdint>

#include "transport/doorbell.hpp"

namespace onesided::detail {

// Lives in shared memory; all zero is unlocked. Writers count in the low 32
// bits and readers in the high 32 bits of each ticket word: a reader compares
// only the low half, which carries never disturb, and a writer compares the
// whole word, where equal sums mean every earlier holder has left. Sleeping
// waiters use the doorbell protocol on `bell`: every unlock rings it.
struct alignas(64) SharedLockWord {
  std::uint64_t requests;
  std::uint64_t completions;
  BellWord bell;
};

class SharedLock {
 public:
  explicit SharedLock(SharedLockWord& word) : word_(word) {}
  // Blocks until granted. Acquire ordering: the previous holders' stores
  // (released by their unlock) are visible after it. While asleep, `check`
  // runs every 10 ms and may raise to give up, and so may the interrupt
  // hook (onesided/interrupt.hpp): the ticket stays taken, so the lock is
  // still owed to this caller, who must wait() for it again before
  // unlock() (a ticket lock cannot forget a place in line).
  void lock(bool exclusive, const std::function<void()>& check = {});
  // lock() in two steps, for a caller that must do something before it
  // may block (the Python binding releases the GIL): request() takes this
  // caller's place in line and returns its ticket, after which the lock is
  // owed to it (it must wait() and later unlock()); granted() says whether
  // wait() would return at once, with the same acquire ordering.
  std::uint64_t request(bool exclusive);
  bool granted(std::uint64_t ticket, bool exclusive) const;
  void wait(std::uint64_t ticket, bool exclusive, const std::function<void()>& check = {});
  // Release ordering: this holder's stores are visible to the next holder.
  void unlock(bool exclusive);
  // Someone holds the lock or waits for it (a hint: it may change at once).
  bool busy() const;

 private:
  SharedLockWord& word_;
};

}  // namespace onesided::detail
