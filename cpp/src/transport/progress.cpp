#include "transport/progress.hpp"
#include "transport/ready_fd.hpp"

#include <sys/prctl.h>

#include <cstdlib>
#include <ctime>

namespace onesided::detail {
namespace {

std::chrono::microseconds env_us(const char* name, long fallback) {
  if (const char* v = std::getenv(name)) {
    char* end = nullptr;
    long x = std::strtol(v, &end, 10);
    if (end != v && x >= 0) return std::chrono::microseconds(x);
  }
  return std::chrono::microseconds(fallback);
}

// CPU time of every thread of this process so far (a system call, taken
// only around the spin loop's occasional yields).
std::chrono::nanoseconds process_cpu() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

}  // namespace

ProgressEngine::ProgressEngine(Transport& transport)
    : transport_(transport),
      spin_(env_us("ONESIDED_PROGRESS_SPIN_US", 200)),
      hot_(env_us("ONESIDED_PROGRESS_HOT_US", 5000)),
      max_nap_(env_us("ONESIDED_PROGRESS_NAP_US", 200)),
      bell_(Doorbell::own()) {
  thread_ = std::thread([this] { run(); });
}

ProgressEngine::~ProgressEngine() { stop(); }

void ProgressEngine::stop() {
  stop_ = true;
  if (forked()) {
    // The thread is the parent's; joining or detaching its handle would
    // free a stack this process does not own. Leaked: the child holds it.
    if (thread_.joinable()) new std::thread(std::move(thread_));
    return;
  }
  if (thread_.joinable()) thread_.join();
}

std::size_t ProgressEngine::round(bool wait_turn) {
  check_not_forked(made_in_, "this endpoint");
  try {
    const std::size_t n = transport_.progress(wait_turn);
    // What this poll wrote (data the provider placed, which raises no event
    // at the target; software atomics applied; flags set) is published to
    // threads that observe() later. A store, not a read-modify-write: only
    // one thread progresses at a time (the transport's try-lock), and
    // another core reads the line only at its synchronisation calls.
    delivered_.store(delivered_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    return n;
  } catch (const Error& e) {
    std::lock_guard lk(failure_mutex_);
    if (!failed_) failure_ = e.what();
    failed_ = true;
    throw;
  }
}

void ProgressEngine::watch(const void* key, std::function<bool()> busy) {
  std::lock_guard lk(watch_mutex_);
  watched_[key] = std::move(busy);
  n_watched_.store(static_cast<int>(watched_.size()), std::memory_order_relaxed);
}

void ProgressEngine::unwatch(const void* key) {
  std::lock_guard lk(watch_mutex_);
  watched_.erase(key);
  n_watched_.store(static_cast<int>(watched_.size()), std::memory_order_relaxed);
}

bool ProgressEngine::watched_busy() {
  if (n_watched_.load(std::memory_order_relaxed) == 0) return false;
  std::lock_guard lk(watch_mutex_);
  for (auto& [key, busy] : watched_)
    if (busy()) return true;
  return false;
}

std::size_t ProgressEngine::rest(std::chrono::microseconds d) {
  if (!bell_) {
    std::this_thread::sleep_for(d);
    return 0;
  }
  std::size_t n = 0;
  Doorbell::wait(*bell_, d, [&] { return (n = poll()) > 0; });
  return n;
}

void ProgressEngine::check_failure() {
  if (!failed_) return;
  std::lock_guard lk(failure_mutex_);
  raise(ErrorCategory::Transport, "the fabric failed: " + failure_);
}

void ProgressEngine::run() {
  using clock = std::chrono::steady_clock;
  // Short sleeps must be short: the default 50 us timer slack would make
  // every "10 us" nap a 60 us one.
  ::prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  auto last_event = clock::now() - hot_;
  auto nap = kShortNap;
  bool contended = false;
  auto contended_at = last_event;
  auto yielded_at = last_event;
  std::uint64_t entries_seen = 0;
  auto aside = kStandAside;  // the next sleep while a thread is in wait()
  while (!stop_) {
    const std::uint64_t entries = entries_.load(std::memory_order_relaxed);
    const bool in_wait = callers_.load(std::memory_order_relaxed) > 0;
    if (in_wait || entries != entries_seen) {
      // A thread in wait() polls for the whole process: everything this
      // thread would do, it does, in the thread that wants the result.
      // One that entered wait() during our last sleep is likely to again
      // (an operation + flush loop spends most of its time there), so we
      // stay aside until a whole sleep passed without one: a poll of ours
      // between two of its waits would hold the transport (a tcp poll is
      // a system call over every socket) just when it wants it.
      // A plain sleep, not the doorbell: rings need not wake us, and
      // ringers skip the futex call while nobody sleeps on the bell.
      // While waits go on, each sleep is twice the last, up to
      // kStandAsideMax: every wake-up of this thread takes a core from
      // the waiting thread or from a peer's (on 2 vCPUs, the 20000
      // wake-ups a second of 50 us sleeps made an shm operation + flush
      // measurably slower: docs/performance-cpp.md, 2026-12-02). A sleep
      // that starts with no thread in wait() is short: the waits may
      // have ended.
      entries_seen = entries;
      std::this_thread::sleep_for(in_wait ? aside : kStandAside);
      aside = std::min(aside * 2, kStandAsideMax);
      continue;
    }
    aside = kStandAside;
    std::size_t n = 0;
    try {
      n = poll();
    } catch (const Error&) {
      return;  // recorded by poll(); waiters raise it
    }
    const auto now = clock::now();
    if (n > 0) {
      last_event = now;
      nap = kShortNap;
      continue;
    }
    // Three regimes (besides standing aside for a waiting thread, above).
    // Right after an event, while a remote origin holds a
    // lock here (RMA may arrive at any moment, and shm needs this process to
    // poll even for puts), or while an event loop awaits a request (it does
    // not poll: this thread completes the request), spin, yielding: traffic is answered in
    // microseconds. But a yielding thread sharing a core with a CPU-bound
    // one (the application computing) waits out the other's time slice,
    // milliseconds; a yield that took that long marks the core contended for
    // a while, and then, as when traffic is merely recent, we take short
    // sleeps: a thread waking from sleep is scheduled ahead of a CPU-bound
    // one. Only this process's own threads count: when another process
    // took the core (a loaded machine), napping gives our application
    // nothing and makes every remote operation wait for a wake-up, so we
    // keep spinning, as a raw fi_cq_read loop would. When idle, nap with
    // growing pauses to leave the cores alone.
    const bool expected =
        expected_.load(std::memory_order_relaxed) > 0 || watched_busy() || ReadyFd::any_awaited();
    if (contended && now - contended_at > kReprobe) contended = false;  // the application may be done
    if ((expected || now - last_event < spin_) && !contended) {
      // Poll back to back, as a raw fi_cq_read loop does, and yield at
      // most once per kYieldPeriod: a yield hands the core to any runnable
      // thread, of any process, for up to its time slice, and a request
      // arriving meanwhile waits for it (yielding every 16th poll made an
      // shm round trip 10-16 us instead of 1.2).
      if (now - yielded_at < kYieldPeriod) continue;
      yielded_at = now;
      const auto ours_before = process_cpu();
      std::this_thread::yield();
      const auto took = clock::now() - now;
      if (took > kContendedYield && process_cpu() - ours_before > took / 2) {
        contended = true;
        contended_at = now;
      }
      continue;
    }
    // Sleeping on the doorbell: an origin on this host that posts to us
    // wakes us at once, so the naps bound only what nobody rings for.
    try {
      if (expected || now - last_event < hot_) {
        n = rest(kShortNap);
      } else {
        contended = false;
        n = rest(nap);
        nap = std::min(nap * 2, max_nap_);
      }
    } catch (const Error&) {
      return;
    }
    if (n > 0) {
      last_event = clock::now();
      nap = kShortNap;
    }
  }
}

}  // namespace onesided::detail
