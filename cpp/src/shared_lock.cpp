#include "shared_lock.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <ctime>
#include <thread>

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

// Not FUTEX_PRIVATE: the word is in memory shared between processes.
void futex_wait(std::uint32_t* word, std::uint32_t seen) {
  // A backstop only: every unlock wakes the sleepers it can see.
  timespec backstop{0, 10'000'000};
  ::syscall(SYS_futex, word, FUTEX_WAIT, seen, &backstop, nullptr, 0);
}

void futex_wake_all(std::uint32_t* word) { ::syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0); }

// Every load and update below is seq_cst: a waiter that announces itself in
// `sleepers` and then still sees the lock taken is either seen by the
// unlocker's load of `sleepers` (and woken) or has read `releases` before the
// unlock bumped it (and futex_wait returns at once).
template <class Ready>
void wait_until(SharedLockWord& w, Ready ready) {
  for (int i = 0; i < 256; ++i) {
    if (ready()) return;
    cpu_relax();
  }
  // The holder may be a descheduled process on this core.
  for (int i = 0; i < 32; ++i) {
    if (ready()) return;
    std::this_thread::yield();
  }
  std::atomic_ref<std::uint32_t> releases(w.releases), sleepers(w.sleepers);
  for (;;) {
    sleepers.fetch_add(1);
    const std::uint32_t seen = releases.load();
    const bool done = ready();
    if (!done) futex_wait(&w.releases, seen);
    sleepers.fetch_sub(1);
    if (done) return;
  }
}

}  // namespace

void SharedLock::lock(bool exclusive) {
  std::atomic_ref<std::uint64_t> requests(word_.requests), completions(word_.completions);
  const std::uint64_t before = requests.fetch_add(exclusive ? kWriter : kReader);
  if (exclusive)
    wait_until(word_, [&] { return completions.load() == before; });
  else
    wait_until(word_, [&] { return (completions.load() & kWriters) == (before & kWriters); });
}

void SharedLock::unlock(bool exclusive) {
  std::atomic_ref<std::uint64_t> completions(word_.completions);
  std::atomic_ref<std::uint32_t> releases(word_.releases), sleepers(word_.sleepers);
  completions.fetch_add(exclusive ? kWriter : kReader);
  releases.fetch_add(1);
  if (sleepers.load() != 0) futex_wake_all(&word_.releases);
}

bool SharedLock::busy() const {
  std::atomic_ref<std::uint64_t> requests(word_.requests), completions(word_.completions);
  return requests.load(std::memory_order_relaxed) != completions.load(std::memory_order_relaxed);
}

}  // namespace onesided::detail
