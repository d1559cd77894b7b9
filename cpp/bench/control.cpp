#include "control.hpp"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>

namespace onesided_bench {
namespace {

void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t value) {
  // Not FUTEX_PRIVATE: the word is shared between processes.
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT, value, nullptr, nullptr, 0);
}
void futex_wake(std::atomic<std::uint32_t>* word) {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace

void set_phase(Control& c, Phase p) {
  c.phase.store(p, std::memory_order_seq_cst);
  futex_wake(&c.phase);
  while (c.ack.load(std::memory_order_acquire) != p) ::sched_yield();
}

// Target: behave as the origin's phase asks until kDone.
void target_loop(Control& c, RawFabric* raw_shm, RawFabric* raw_tcp) {
  for (;;) {
    const auto p = static_cast<Phase>(c.phase.load(std::memory_order_acquire));
    c.ack.store(p, std::memory_order_release);
    switch (p) {
      case kIdle:
        futex_wait(&c.phase, kIdle);
        break;
      case kSpin:
        while (c.phase.load(std::memory_order_relaxed) == kSpin) (void)c.floor[0].load(std::memory_order_relaxed);
        break;
      case kRawShm:
        while (c.phase.load(std::memory_order_relaxed) == kRawShm) raw_shm->poll();
        break;
      case kRawTcp:
        while (c.phase.load(std::memory_order_relaxed) == kRawTcp) raw_tcp->poll();
        break;
      case kDone:
        return;
    }
  }
}

}  // namespace onesided_bench
