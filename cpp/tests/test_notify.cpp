// Notified RMA between two processes on each path: a notification is never
// seen before its data (a ping-pong of 4 KiB puts, the receiver checking
// every element when the count arrives), counts are exact under concurrent
// threads, and bad indices raise before anything is sent.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "onesided/window.hpp"
#include "pair_processes.hpp"

using namespace onesided;
using onesided::testing::run_pair;

namespace {

constexpr std::size_t kWords = 512;  // 4 KiB of int64 per put
constexpr int kRounds = 2000;

Info info_for(const std::string& name) {
  Info info{{"onesided_notifications", "2"}};
  if (name == "shm") info.insert({{"provider", "shm"}, {"onesided_shared_memory", "off"}});
  if (name == "tcp") info.insert({"provider", "tcp;ofi_rxm"});
  if (name == "nasty") info.insert({{"provider", "shm"}, {"onesided_shared_memory", "off"}, {"onesided_nasty", "3"}});
  return info;
}

// Rank 1 puts kWords copies of i and notifies counter 0; rank 0, once the
// count is i, checks every word, then notifies rank 1's counter 1.
bool ping_pong(int rank, std::shared_ptr<Bootstrap> boot, const std::string& name) {
  auto win = Window::allocate(kWords * 8, 8, info_for(name), boot);
  if ((name == "shared-memory") != (win->path_name() == "shared-memory")) return false;
  const auto* mine = static_cast<const std::int64_t*>(win->base());
  std::vector<std::int64_t> src(kWords);
  bool ok = true;
  win->lock_all();
  for (int i = 1; i <= kRounds && ok; ++i) {
    if (rank == 1) {
      std::fill(src.begin(), src.end(), i);
      win->put(src.data(), kWords, Dtype::Int64, 0, 0);
      win->notify(0, 0);
      win->wait_notify(1, static_cast<std::uint64_t>(i));
    } else {
      win->wait_notify(0, static_cast<std::uint64_t>(i));
      for (std::size_t k = 0; k < kWords; ++k) ok = ok && mine[k] == i;
      win->notify(1, 1);
    }
  }
  win->unlock_all();
  boot->barrier();
  win->free();
  return ok;
}

// Rank 1: two threads, each kRounds notifications to rank 0 (every other
// one after an accumulate); rank 0 waits for the total, which must then be
// exact after rank 1 flushed.
bool exact_counts(int rank, std::shared_ptr<Bootstrap> boot, const std::string& name) {
  auto win = Window::allocate(64, 8, info_for(name), boot);
  constexpr std::uint64_t kTotal = 2 * kRounds;
  bool ok = true;
  win->lock_all();
  if (rank == 1) {
    auto origin = [&] {
      const std::int64_t one = 1;
      for (int k = 0; k < kRounds; ++k) {
        if (k % 2) win->accumulate(&one, 1, Dtype::Int64, 0, 0, Op::Sum);
        Request req;
        win->notify(0, 0, k % 3 ? nullptr : &req);
        if (req.valid()) req.wait();
      }
    };
    std::thread a(origin), b(origin);
    a.join();
    b.join();
    win->flush(0);
  } else {
    win->wait_notify(0, kTotal);
  }
  win->unlock_all();
  boot->barrier();
  if (rank == 0) {
    ok = win->notify_value(0) == kTotal && win->notify_value(1) == 0 &&
         static_cast<const std::int64_t*>(win->base())[0] == kRounds;
    ok = ok && win->set_notify_value(0, 0) == kTotal && win->notify_value(0) == 0;
  }
  win->free();
  return ok;
}

class NotifyTest : public ::testing::TestWithParam<const char*> {};

TEST_P(NotifyTest, NotificationNeverPrecedesItsData) {
  run_pair([&](int rank, std::shared_ptr<Bootstrap> boot) { return ping_pong(rank, boot, GetParam()); });
}

TEST_P(NotifyTest, CountsAreExactUnderConcurrentThreads) {
  run_pair([&](int rank, std::shared_ptr<Bootstrap> boot) { return exact_counts(rank, boot, GetParam()); });
}

INSTANTIATE_TEST_SUITE_P(Paths, NotifyTest, ::testing::Values("shared-memory", "shm", "tcp", "nasty"));

TEST(Notify, BadIndicesRaiseBeforeAnythingIsSent) {
  run_pair([](int rank, std::shared_ptr<Bootstrap> boot) {
    auto win = Window::allocate(64, 8, info_for("shared-memory"), boot);
    bool ok = true;
    win->lock_all();
    if (rank == 0) {
      for (std::size_t bad : {std::size_t{2}, std::size_t{1} << 40}) {
        try {
          win->notify(1, bad);
          ok = false;
        } catch (const Error& e) {
          ok = ok && e.category() == ErrorCategory::Argument &&
               std::string(e.what()).find("notification_idx") != std::string::npos;
        }
      }
    }
    win->unlock_all();
    boot->barrier();
    ok = ok && win->notify_value(0) == 0 && win->notify_value(1) == 0;
    win->free();
    return ok;
  });
}

}  // namespace
