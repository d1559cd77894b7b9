// A doorbell per process, for ranks on one host. libfabric's shm provider
// moves an operation only when the target process polls, so an idle target's
// progress thread must either poll all the time (taking a core from the
// application, and on an oversubscribed host from the other ranks) or sleep
// and answer late. With a doorbell it sleeps on a futex, and an origin that
// has just posted an operation to it wakes it: a sleeping thread woken this
// way is scheduled at once, ahead of CPU-bound threads.
//
// The bell is one page of a MemoryFile (memory/memory_file.hpp): it has no
// name, so nothing of it outlives the processes that map it, however the
// owner dies. Peers learn where to open it at window creation (the window
// records carry address()) and map it once; the owner keeps the descriptor
// open for its whole life, since a peer may first share a window with it
// at any time. A peer whose bell cannot be opened (another user, a process
// that is not dumpable) is simply not rung: every sleep is bounded, so rings
// only make answers earlier, never possible.
//
// Fork: a child has its own bell, made on its first own(), never its
// parent's (which it inherits mapped, and whose descriptor its own() closes
// in the child): it neither sleeps on nor consumes its parent's rings, and
// the parent's bell and its peers' mappings of it stay as they were.
//
// wait() and ring() work on any BellWord in shared memory; SharedLock's
// waiters sleep on one the same way.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

#include "memory/memory_file.hpp"

namespace onesided::detail {

struct BellWord {
  std::uint32_t rings;     // futex word: bumped by every ring that saw a sleeper
  std::uint32_t sleepers;  // threads of the owner inside wait()
};

class Doorbell {
 public:
  // This process's bell (made on first use), or null if it cannot be made.
  static BellWord* own();
  // Where peers open this process's bell (made if need be); an empty
  // address (fd -1) if it cannot be made.
  static MemoryFileAddress address();
  // The bell at `at` (another process on this host), mapped once and
  // cached; null if it cannot be opened.
  static BellWord* of(const MemoryFileAddress& at);

  // Sleeps up to `limit` unless rung; `ready()` is checked after announcing
  // the sleep, so an operation posted before the announcement is not slept
  // through. Returns at once if ready() holds.
  static void wait(BellWord& bell, std::chrono::microseconds limit, const std::function<bool()>& ready);
  // After posting an operation to the bell's owner: wake it if it sleeps.
  // Costs one read-modify-write of the bell's line when the owner is awake.
  static void ring(BellWord& bell);
};

}  // namespace onesided::detail
