// The one place onesided orders memory with a standalone fence.
//
// Where one thread of this process hands data to another thread of this
// process, onesided uses acquire/release on the variable that carries the
// signal (ThreadSanitizer checks those). A fence remains only where the
// signal travels through another process or through libfabric, neither of
// which this process's atomics can name: stores a rank made to memory that
// other processes map (the shared-memory path's puts, Allocate_shared
// segments) must be ordered before the lock word, message or futex through
// which the other process learns of them, and its loads after. On x86 it
// is one mfence; ThreadSanitizer cannot see it, and need not: the other
// side is not in this process.
#pragma once

#include <atomic>

namespace onesided::detail {

inline void cross_process_fence() { std::atomic_thread_fence(std::memory_order_seq_cst); }

}  // namespace onesided::detail
