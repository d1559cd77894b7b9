// Which process made an object, as cheaply as a relaxed load: a number that
// every child fork() makes bumps (pthread_atfork), so an object that
// recorded fork_generation() at its making can tell, in a child, that it is
// its parent's. libfabric's endpoints are not fork-safe: their queues and
// shm regions stay shared with the parent, so a child that polled or sent
// through them would consume or forge the parent's traffic. Objects tied to
// the process (the progress engine, windows, endpoints) check it.
#pragma once

#include <atomic>
#include <cstdint>

namespace onesided::detail {

// 0 in a process no fork() has made since onesided first asked; n in a
// child n fork()s deep (counted from that first call).
std::uint64_t fork_generation();
// The word fork_generation() reads, for a caller that keeps it and reads
// it inline (onesided/epoch.hpp: once per call, relaxed).
const std::atomic<std::uint64_t>& fork_generation_word();

// The Epoch error for using `what`, an object of the parent, in a child.
[[noreturn]] void raise_forked(const char* what);

// Raises it when `made_in` is not this process's generation.
inline void check_not_forked(std::uint64_t made_in, const char* what) {
  if (fork_generation() != made_in) raise_forked(what);
}

}  // namespace onesided::detail
