// A doorbell per process, for ranks on one host. libfabric's shm provider
// moves an operation only when the target process polls, so an idle target's
// progress thread must either poll all the time (taking a core from the
// application, and on an oversubscribed host from the other ranks) or sleep
// and answer late. With a doorbell it sleeps on a futex, and an origin that
// has just posted an operation to it wakes it: a sleeping thread woken this
// way is scheduled at once, ahead of CPU-bound threads.
//
// The bell is one shared-memory page named after the process id, so any rank
// on the host that knows the pid can map it (subject to file permissions,
// the same rule as the shm provider's own regions). A peer whose bell cannot
// be opened is simply not rung: every sleep is bounded, so rings only make
// answers earlier, never possible.
//
// wait() and ring() work on any BellWord in shared memory; SharedLock's
// waiters sleep on one the same way.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <sys/types.h>

namespace onesided::detail {

struct BellWord {
  std::uint32_t rings;     // futex word: bumped by every ring that saw a sleeper
  std::uint32_t sleepers;  // threads of the owner inside wait()
};

class Doorbell {
 public:
  // This process's bell (made on first use), or null if it cannot be made.
  static BellWord* own();
  // Process `pid`'s bell on this host, mapped once and cached; null if it
  // cannot be opened.
  static BellWord* of(pid_t pid);
  // Removes this process's bell name (process exit); the mapping stays valid,
  // and a later own() makes a new bell. A forked child never removes its
  // parent's.
  static void remove_own();

  // Sleeps up to `limit` unless rung; `ready()` is checked after announcing
  // the sleep, so an operation posted before the announcement is not slept
  // through. Returns at once if ready() holds.
  static void wait(BellWord& bell, std::chrono::microseconds limit, const std::function<bool()>& ready);
  // After posting an operation to the bell's owner: wake it if it sleeps.
  // Costs one read-modify-write of the bell's line when the owner is awake.
  static void ring(BellWord& bell);
};

}  // namespace onesided::detail
