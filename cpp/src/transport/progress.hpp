// The progress engine. libfabric's shm and tcp providers progress data only
// when somebody polls, so a background thread polls on the process's behalf:
// passive-target operations complete while the target computes, sleeps or
// holds the GIL. Threads that wait for their own operations poll
// themselves, which keeps their latency off the background thread's
// schedule; while one does, the background thread sleeps (stands aside).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "common/interrupt_pace.hpp"
#include "transport/doorbell.hpp"
#include "transport/fork_generation.hpp"
#include "onesided/error.hpp"
#include "transport/transport.hpp"

namespace onesided::detail {

class ProgressEngine {
 public:
  explicit ProgressEngine(Transport& transport);
  ~ProgressEngine();
  ProgressEngine(const ProgressEngine&) = delete;
  ProgressEngine& operator=(const ProgressEngine&) = delete;

  // Polls until done() holds. Raises a Transport error if the fabric failed.
  // The calling thread reaps its own completions, as a raw fi_cq_read loop
  // does: while any thread waits here the background thread stands aside
  // (run()), so no completion is handed from one thread to another and no
  // third thread competes for the cores and the CQ.
  template <class Pred>
  void wait(Pred&& done) {
    // Already done (a flush's wait for acknowledgements when nothing was
    // notified): no poll to make, so no entry for run() to stand aside for.
    if (done()) return check_failure();
    Caller in(callers_, entries_);
    unsigned idle = 0;
    InterruptPace interrupt;
    for (unsigned n = 1; !done(); ++n) {
      check_failure();
      // The hook's clock is read every 256th round only: rounds are short.
      if (n % kInterruptRounds == 0) interrupt();
      if (poll() != 0) {
        idle = 0;
      } else if (++idle > 64 && idle % kYieldEvery == 0) {
        // Nothing has arrived yet (or another waiting thread holds the
        // poll): let the other ranks' threads run, which matters when
        // ranks outnumber cores. Not on every poll: a yield is a system
        // call (0.5 us in a VM), longer than an shm round trip's share.
        // Past kSpinRounds idle rounds, sleep instead: a provider's own
        // thread (rxm's connection manager, which accepts the connections
        // a first transfer needs) takes the endpoint lock each poll holds,
        // and a thread that polls and yields without pause can starve it
        // for as long as it waits; under srun, six ranks on two cores
        // saw connection requests stay unanswered for 20 s.
        if (idle > kSpinRounds)
          std::this_thread::sleep_for(kShortNap);
        else
          std::this_thread::yield();
      }
    }
    check_failure();
  }

  // Polls until done() holds, for a condition some other thread or
  // process sets in memory (a notification counter) rather than one this
  // thread's polling completes: done() is read every round, progress
  // polled every 16th and the core yielded every 256th (ranks may
  // outnumber cores), where wait() polls every round and yields after 64
  // idle ones, which costs a waiter on the shared-memory path its reaction
  // time. A waiter here counts as one in wait(): the background thread
  // stands aside and this thread's polls are the process's progress (a
  // Notify message needs one). Without that, the two spun side by side:
  // with both ranks of a ping-pong in Wait_notify, four busy threads on
  // two cores, and a notified put over libfabric shm took 0.5-0.85 ms
  // under Open MPI's launcher (docs/performance.md, figure 3c).
  // `check` runs every 1024th round (it raises when a peer died).
  // Both waits end in Error(Interrupted) when the interrupt hook asks
  // (onesided/interrupt.hpp); what they waited for is not cancelled.
  template <class Pred, class Check>
  void spin(Pred&& done, Check&& check) {
    if (done()) return;
    Caller in(callers_, entries_);
    InterruptPace interrupt;
    for (unsigned n = 1; !done(); ++n) {
      if (n % 16 == 0) poll();
      if (n % 256 == 0) {
        std::this_thread::yield();
        // After the yield, which may take a loaded machine's time slice.
        interrupt();
      }
      if (n % 1024 == 0) {
        check_failure();
        check();
      }
    }
  }

  // One round of progress from the calling thread (none if another thread
  // is progressing: its round covers this one's).
  std::size_t poll() { return round(false); }

  // One round from a thread that polls in a loop of its own calls (Sync
  // in a loop waiting for a flag): counted as an entry into wait(), so the
  // background thread stands aside while the loop goes on (run()), and
  // two threads of one process do not compete for the cores and the
  // transport; it resumes within kStandAsideMax of the loop's end.
  std::size_t poll_in_loop() {
    entries_.fetch_add(1, std::memory_order_relaxed);
    return poll();
  }

  // One round that also waits for a round in progress elsewhere to end:
  // when it returns, everything that had arrived when it was called has
  // been dispatched. For the calls that answer "has it arrived?" once,
  // without waiting (Win_test): a plain poll() returning while the
  // background thread is mid-way through dispatching the very message
  // asked about would answer no.
  std::size_t poll_whole() { return round(true); }

  // The calling thread sees everything progress delivered before (into
  // window memory, by any thread of this process): the acquire side of
  // the release each poll that dispatched events makes. Synchronisation
  // calls end with it, so a rank reads its window after Fence, Unlock,
  // Wait or Sync without a data race that ThreadSanitizer could flag.
  void observe() const { (void)delivered_.load(std::memory_order_acquire); }

  // Joins the background thread (process exit); waiters still progress.
  // In a child made by fork() the thread does not exist: its handle is let go.
  void stop();

  // Whether this engine is the parent's, seen from a child made by fork():
  // it must then neither poll (the provider's queues are still the
  // parent's) nor be torn down (see fork_generation.hpp).
  bool forked() const { return fork_generation() != made_in_; }

  // While a remote origin holds a passive-target lock here, RMA may arrive
  // at any moment and (on shm) needs this process to poll: stay hot rather
  // than nap. Windows count lock requests in and releases out.
  void expect_traffic(int delta) { expected_ += delta; }

  // The same for locks taken without messages (a window lock in shared
  // memory): while `busy()` holds, stay hot. `busy` is called from the
  // background thread; unwatch(key) returns only once it no longer runs.
  void watch(const void* key, std::function<bool()> busy);
  void unwatch(const void* key);

 private:
  std::size_t round(bool wait_turn);
  void run();
  void check_failure();
  // Sleeps up to `d` on this process's doorbell (a ring from an origin on
  // this host ends it early); returns what a poll found meanwhile.
  std::size_t rest(std::chrono::microseconds d);

  // A thread inside wait(), counted while it is there; every entry is
  // counted too, so run() sees a thread that waits again and again even
  // when it looks between two waits.
  struct Caller {
    std::atomic<int>& n;
    explicit Caller(std::atomic<int>& c, std::atomic<std::uint64_t>& entries) : n(c) {
      n.fetch_add(1, std::memory_order_relaxed);
      entries.fetch_add(1, std::memory_order_relaxed);
    }
    ~Caller() { n.fetch_sub(1, std::memory_order_relaxed); }
  };

  Transport& transport_;
  std::atomic<bool> stop_{false};
  std::atomic<int> callers_{0};  // threads in wait(), which poll for the process
  std::atomic<std::uint64_t> entries_{0};  // entries into wait() so far
  std::atomic<std::uint64_t> delivered_{0};  // see observe()
  std::atomic<bool> failed_{false};
  std::atomic<int> expected_{0};
  bool watched_busy();
  std::mutex watch_mutex_;
  std::map<const void*, std::function<bool()>> watched_;  // guarded by watch_mutex_
  std::atomic<int> n_watched_{0};
  std::mutex failure_mutex_;
  std::string failure_;
  static constexpr std::chrono::microseconds kShortNap{10};
  // While spinning, wait() yields the core on every this-many-th idle poll.
  static constexpr unsigned kYieldEvery = 16;
  // Idle rounds wait() spins (polls and yields) before it also sleeps
  // between polls: about a millisecond, far beyond any round trip a
  // waiter would lose by sleeping.
  static constexpr unsigned kSpinRounds = 8192;
  // wait() reads the interrupt pace's clock on every this-many-th round.
  static constexpr unsigned kInterruptRounds = 256;
  // run()'s hot regime yields at most this often (see there).
  static constexpr std::chrono::microseconds kYieldPeriod{1000};
  // How long the background thread sleeps, without polling, while a thread
  // in wait() polls: kStandAside at first, doubling while waits go on, up
  // to kStandAsideMax. It resumes once a whole sleep saw no thread enter:
  // at most kStandAsideMax + kStandAside after the last one left (a sleep
  // that starts while no thread waits is kStandAside long), where it was
  // 2 x kStandAside with sleeps of kStandAside only.
  static constexpr std::chrono::microseconds kStandAside{50};
  static constexpr std::chrono::microseconds kStandAsideMax{400};
  static constexpr std::chrono::microseconds kContendedYield{500};
  static constexpr std::chrono::milliseconds kReprobe{20};
  std::chrono::microseconds spin_;      // spin this long after an event
  std::chrono::microseconds hot_;       // then short naps until this long after it
  std::chrono::microseconds max_nap_;   // longest sleep while idle
  BellWord* bell_ = nullptr;           // null: plain sleeps
  std::uint64_t made_in_ = fork_generation();
  std::thread thread_;
};

}  // namespace onesided::detail
