#include "locks/shared_lock.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "common/interrupt_pace.hpp"

namespace onesided::detail {
namespace {

constexpr std::uint64_t kWriter = 1;
constexpr std::uint64_t kReader = std::uint64_t{1} << 32;
constexpr std::uint64_t kWriters = 0xffffffffu;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// The ticket loads and updates are seq_cst, which the doorbell's no-lost-
// wakeup argument needs (an unlock's completion is the "posted operation").
template <class Ready>
void wait_until(SharedLockWord& w, Ready ready, const std::function<void()>& check) {
  for (int i = 0; i < 256; ++i) {
    if (ready()) return;
    cpu_relax();
  }
  // The holder may be a descheduled process on this core.
  for (int i = 0; i < 32; ++i) {
    if (ready()) return;
    std::this_thread::yield();
  }
  // The 10 ms limit is a backstop only: every unlock rings. Between sleeps
  // `check` may raise (a holder that died will never unlock), and so may
  // the interrupt hook; either leaves the ticket taken (see the header).
  InterruptPace interrupt;
  while (!ready()) {
    Doorbell::wait(w.bell, std::chrono::milliseconds(10), ready);
    if (ready()) return;
    if (check) check();
    interrupt();
  }
}

}  // namespace

void SharedLock::lock(bool exclusive, const std::function<void()>& check) {
  wait(request(exclusive), exclusive, check);
}

std::uint64_t SharedLock::request(bool exclusive) {
  return std::atomic_ref<std::uint64_t>(word_.requests).fetch_add(exclusive ? kWriter : kReader);
}

// An exclusive locker waits for every earlier holder to leave; a shared one
// only for the earlier exclusive ones.
bool SharedLock::granted(std::uint64_t ticket, bool exclusive) const {
  const std::uint64_t done = std::atomic_ref<std::uint64_t>(word_.completions).load();
  return exclusive ? done == ticket : (done & kWriters) == (ticket & kWriters);
}

void SharedLock::wait(std::uint64_t ticket, bool exclusive, const std::function<void()>& check) {
  wait_until(word_, [&] { return granted(ticket, exclusive); }, check);
}

void SharedLock::unlock(bool exclusive) {
  std::atomic_ref<std::uint64_t>(word_.completions).fetch_add(exclusive ? kWriter : kReader);
  Doorbell::ring(word_.bell);
}

bool SharedLock::busy() const {
  std::atomic_ref<std::uint64_t> requests(word_.requests), completions(word_.completions);
  return requests.load(std::memory_order_relaxed) != completions.load(std::memory_order_relaxed);
}

}  // namespace onesided::detail
