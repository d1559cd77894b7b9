// The progress engine's background thread stands aside while a thread of
// the process polls for it: one waiting in spin() (Wait_notify) and one
// calling poll_in_loop() again and again (a loop of Syncs waiting for a
// flag on a provider path). Two threads of one process polling side by
// side compete for the cores; with both ranks of a ping-pong so, four busy
// threads on two cores made a notified put over libfabric shm 0.5-0.85 ms.
//
// Each test polls for 4 ms of the steady clock (a busy loop, not a sleep)
// and counts the transport's polls by thread: the background thread may
// finish the poll it had begun when the stretch started and the one its
// doorbell nap takes on waking, nothing more. Polling on its own instead,
// it polls at least every 200 us (its longest nap), some twenty times.
// Where the test's thread was off its core for a whole stand-aside sleep
// (50 us at least), the background thread rightly polls: a stretch in
// which the test's thread never paused 45 us tells, and up to fifty are
// tried (on this VM a busy loop alone sees a 45 us pause about every 10 ms).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "null_transport.hpp"
#include "transport/progress.hpp"

using namespace onesided::detail;

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kStretch = std::chrono::milliseconds(4);
// The background thread polls only after a whole stand-aside sleep (50 us)
// saw no entry: a shorter pause of the test's thread cannot let it.
constexpr auto kPause = std::chrono::microseconds(45);
constexpr int kBackgroundPollsAtMost = 3;
constexpr int kAttempts = 50;

// Counts progress() calls made by the test's thread and by any other.
class CountingTransport final : public NullTransport {
 public:
  CountingTransport() : NullTransport("counting") {}
  std::size_t progress(bool) override {
    if (std::this_thread::get_id() == caller)
      caller_polls.fetch_add(1, std::memory_order_relaxed);
    else if (counting.load(std::memory_order_acquire))
      background_polls.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<bool> counting{false};
  std::atomic<int> caller_polls{0}, background_polls{0};
};

// The test thread's clock readings over a stretch: whether two in a row
// were kPause or more apart.
class Stretch {
 public:
  Stretch() : last_(Clock::now()), end_(last_ + kStretch) {}
  // Reads the clock; true while the stretch lasts.
  bool go_on() {
    const auto now = Clock::now();
    paused_ = paused_ || now - last_ > kPause;
    last_ = now;
    return now < end_;
  }
  bool paused() const { return paused_; }

 private:
  Clock::time_point last_, end_;
  bool paused_ = false;
};

// Runs `poll_for(stretch)` in stretches until one in which the test's
// thread never paused, and checks the background thread's polls in it.
template <class PollFor>
void expect_the_background_thread_aside(PollFor poll_for) {
  CountingTransport t;
  ProgressEngine engine(t);
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    t.caller_polls = 0;
    t.background_polls = 0;
    Stretch stretch;
    t.counting.store(true, std::memory_order_release);
    poll_for(engine, stretch);
    t.counting.store(false, std::memory_order_release);
    stretch.go_on();  // a pause between the last poll and the end of counting
    if (stretch.paused()) continue;
    EXPECT_GT(t.caller_polls.load(), 0);  // the test's thread polled for the process
    EXPECT_LE(t.background_polls.load(), kBackgroundPollsAtMost);
    engine.stop();
    return;
  }
  engine.stop();
  GTEST_SKIP() << "the test's thread was descheduled in every stretch";
}

}  // namespace

TEST(Progress, TheBackgroundThreadStandsAsideWhileAThreadWaitsInSpin) {
  expect_the_background_thread_aside([](ProgressEngine& engine, Stretch& stretch) {
    engine.spin([&] { return !stretch.go_on(); }, [] {});
  });
}

TEST(Progress, TheBackgroundThreadStandsAsideWhileAThreadPollsInALoop) {
  expect_the_background_thread_aside([](ProgressEngine& engine, Stretch& stretch) {
    do engine.poll_in_loop();
    while (stretch.go_on());
  });
}
