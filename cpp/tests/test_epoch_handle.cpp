// Epoch handles (onesided/epoch.hpp) between two real processes (fork),
// bootstrapped over a socketpair: the per-call checks it keeps, the epoch
// it must not outlive, its data and its atomicity beside the Window's calls.
// Every test's ranks die by alarm(60) if they hang (pair_processes.hpp).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "onesided/epoch.hpp"
#include "onesided/error.hpp"
#include "onesided/window.hpp"
#include "pair_processes.hpp"

using namespace onesided;

namespace {

using onesided::testing::run_pair;

// Whether `call` raises an onesided::Error of `category`.
template <class F>
bool raises(ErrorCategory category, F&& call) {
  try {
    call();
  } catch (const Error& e) {
    if (e.category() == category) return true;
    fprintf(stderr, "raised category %d (wanted %d): %s\n", static_cast<int>(e.category()),
            static_cast<int>(category), e.what());
    return false;
  }
  fprintf(stderr, "did not raise (wanted category %d)\n", static_cast<int>(category));
  return false;
}

// `n`, unknown to the compiler: a huge constant count would make it warn
// about the copy the range check never reaches.
std::size_t opaque(std::size_t n) {
  volatile std::size_t v = n;
  return v;
}

// Rank 1's cells as rank 1 sees them, after rank 0's handle wrote them and
// flushed: the user's barrier, then Win_sync (as test_window.cpp does).
std::vector<std::int64_t> cells_after(Bootstrap& boot, Window& win, std::size_t n) {
  boot.barrier();
  win.sync();
  std::vector<std::int64_t> v(n);
  std::memcpy(v.data(), win.base(), n * sizeof(std::int64_t));
  return v;
}

// A 64-byte window of zeroed int64 cells (disp_unit 8) on both ranks, with
// `info`; the barrier makes every rank's zeros land before anyone writes.
std::unique_ptr<Window> zeroed_window(std::shared_ptr<Bootstrap> boot, const Info& info = {}) {
  auto win = Window::allocate(64, 8, info, boot);
  std::memset(win->base(), 0, 64);
  boot->barrier();
  return win;
}

TEST(EpochHandle, EveryOpMovesTheRightDataToTheOtherProcess) {
  run_pair([](int rank, std::shared_ptr<Bootstrap> boot) {
    auto win = Window::allocate(16 * 8, 8, {}, boot);
    auto* mine = static_cast<std::int64_t*>(win->base());
    for (int i = 0; i < 16; ++i) mine[i] = 100 + i + 1000 * rank;  // distinct per rank: a wrong base shows
    boot->barrier();
    win->lock_all();
    Epoch e = win->epoch_all();
    bool ok = e.direct();
    if (rank == 0) {
      const std::int64_t three[3] = {7, 8, 9};
      e.put(three, 3, 1, 1);  // cells 1..3
      std::int64_t back[3] = {};
      e.get(back, 3, 1, 1);
      ok = ok && back[0] == 7 && back[1] == 8 && back[2] == 9;
      std::int64_t got = 0;
      e.get(&got, 1, 1, 5);
      ok = ok && got == 1105;
      const std::int64_t five = 5, two[2] = {10, 20};
      e.accumulate(two, 2, 1, 6, Op::Sum);  // cells 6, 7
      std::int64_t old[2] = {};
      e.get_accumulate(&five, old, 1, 1, 8, Op::Sum);  // cell 8
      ok = ok && old[0] == 1108;
      e.fetch_and_op(&five, &got, 1, 9, Op::Sum);  // cell 9
      ok = ok && got == 1109;
      const std::int64_t swap = 77, hit = 1110, miss = 1;
      e.compare_and_swap(&swap, &miss, &got, 1, 10);  // fails: cell 10 stays
      ok = ok && got == 1110;
      e.compare_and_swap(&swap, &hit, &got, 1, 10);  // succeeds
      ok = ok && got == 1110;
      e.rmw<std::int64_t>(Op::Inc, nullptr, &got, 1, 1, 11);  // cell 11
      ok = ok && got == 1111;
      const std::int64_t mask = 0xff, value = 0x2a;
      e.rmw2(Op::MaskSwap, &mask, &value, &got, 1, 1, 12);  // cell 12: low byte replaced
      ok = ok && got == 1112;
      e.fetch_and_op(&five, &got, 1, 13, Op::Replace);
      ok = ok && got == 1113;
      e.fetch_and_op<std::int64_t>(nullptr, &got, 1, 14, Op::NoOp);
      ok = ok && got == 1114;
      e.fetch_and_op(&five, &got, 1, 15, Op::Prod);  // no inline form: the Window's call, same memory
      ok = ok && got == 1115;
      e.flush(1);
    }
    win->unlock_all();
    const auto v = cells_after(*boot, *win, 16);
    if (rank == 1) {
      const std::int64_t want[16] = {1100, 7, 8, 9, 1104, 1105, 1106 + 10, 1107 + 20, 1108 + 5, 1109 + 5,
                                     77, 1112, (1112 & ~0xff) | 0x2a, 5, 1114, 1115 * 5};
      for (int i = 0; i < 16; ++i)
        if (v[i] != want[i]) {
          fprintf(stderr, "cell %d holds %lld, expected %lld\n", i, static_cast<long long>(v[i]),
                  static_cast<long long>(want[i]));
          ok = false;
        }
    }
    win->free();
    return ok;
  });
}

TEST(EpochHandle, DisplacementsCountTheTargetsDispUnit) {
  // Rank 1's disp_unit is 2, rank 0's 16, and the elements are int32 and
  // double: the handle scales disp by the target's unit, not its own, not
  // by sizeof(T).
  run_pair([](int rank, std::shared_ptr<Bootstrap> boot) {
    auto win = Window::allocate(64, rank == 1 ? 2 : 16, {}, boot);
    std::memset(win->base(), 0, 64);
    boot->barrier();
    win->lock_all();
    Epoch e = win->epoch_all();
    bool ok = true;
    if (rank == 0) {
      const std::int32_t v = 42, one = 1;
      e.put(&v, 1, 1, 6);  // bytes 12..15 of rank 1
      std::int32_t old = -1;
      e.fetch_and_op(&one, &old, 1, 10, Op::Sum);  // bytes 20..23
      ok = old == 0;
      const double d = 2.5;
      e.accumulate(&d, 1, 1, 16, Op::Sum);  // bytes 32..39, a double (8-aligned)
      e.flush(1);
    }
    win->unlock_all();
    boot->barrier();
    win->sync();
    if (rank == 1) {
      const auto* w = static_cast<const std::int32_t*>(win->base());
      double d;
      std::memcpy(&d, static_cast<const char*>(win->base()) + 32, 8);
      ok = ok && w[2] == 0 && w[3] == 42 && w[4] == 0 && w[5] == 1 && w[6] == 0 && d == 2.5;
    }
    win->free();
    return ok;
  });
}

TEST(EpochHandle, OutOfRangeRaisesBoundsAndWritesNothing) {
  run_pair([](int rank, std::shared_ptr<Bootstrap> boot) {
    // Rank 1 exposes 8 cells, rank 0 sixteen: the target's extent counts.
    auto win = Window::allocate(rank == 1 ? 64 : 128, 8, {}, boot);
    auto* mine = static_cast<std::int64_t*>(win->base());
    for (std::size_t i = 0; i < win->size() / 8; ++i) mine[i] = -1;
    boot->barrier();
    win->lock_all();
    Epoch e = win->epoch_all();
    bool ok = true;
    if (rank == 0) {
      const std::int64_t two[2] = {5, 6};
      std::int64_t got[2] = {-7, -7};
      const auto check = [&](bool b, const char* what) {
        if (!b) fprintf(stderr, "failed: %s\n", what);
        ok = ok && b;
      };
      // The last cell is in range; one more element, or one cell further, is not.
      e.put(two, 1, 1, 7);
      check(raises(ErrorCategory::Bounds, [&] { e.put(two, 2, 1, 7); }), "put 2 at 7");
      check(raises(ErrorCategory::Bounds, [&] { e.put(two, 1, 1, 8); }), "put 1 at 8");
      check(raises(ErrorCategory::Bounds, [&] { e.put(two, 0, 1, 9); }), "put 0 at 9");
      check(raises(ErrorCategory::Bounds, [&] { e.put(two, 1, 1, -1); }), "put at -1");
      check(raises(ErrorCategory::Bounds, [&] { e.put(two, 1, 1, std::numeric_limits<std::int64_t>::min()); }),
            "put at INT64_MIN");
      // disp x disp_unit and count x 8 that wrap around 2^64 if computed naively.
      check(raises(ErrorCategory::Bounds, [&] { e.put(two, 1, 1, std::int64_t{1} << 61); }), "disp 2^61");
      check(raises(ErrorCategory::Bounds, [&] { e.put(two, 1, 1, (std::int64_t{1} << 61) + 1); }),
            "disp 2^61 + 1");
      check(raises(ErrorCategory::Argument, [&] { e.put(two, opaque((std::size_t{1} << 61) + 1), 1, 0); }),
            "count x 8 overflows");
      check(raises(ErrorCategory::Bounds, [&] { e.put(two, opaque(std::size_t{1} << 40), 1, 0); }), "count 2^40");
      check(raises(ErrorCategory::Bounds, [&] { e.put(two, opaque(std::numeric_limits<std::size_t>::max() / 8), 1, 1); }),
            "count near 2^61 at 1");
      check(raises(ErrorCategory::Bounds, [&] { e.get(got, 2, 1, 7); }), "get 2 at 7");
      check(got[0] == -7 && got[1] == -7, "a failed get wrote its result");
      check(raises(ErrorCategory::Bounds, [&] { e.accumulate(two, 2, 1, 7, Op::Sum); }), "accumulate 2 at 7");
      check(raises(ErrorCategory::Bounds, [&] { e.get_accumulate(two, got, 1, 1, 8, Op::Sum); }),
            "get_accumulate at 8");
      check(raises(ErrorCategory::Bounds, [&] { e.fetch_and_op(two, got, 1, 8, Op::Sum); }), "fetch_and_op at 8");
      check(raises(ErrorCategory::Bounds, [&] { e.fetch_and_op(two, got, 1, -1, Op::Sum); }), "fetch_and_op at -1");
      check(raises(ErrorCategory::Bounds, [&] { e.compare_and_swap(two, two, got, 1, 8); }), "cas at 8");
      check(raises(ErrorCategory::Bounds, [&] { e.rmw<std::int64_t>(Op::Inc, nullptr, got, 1, 1, 8); }),
            "rmw at 8");
      check(raises(ErrorCategory::Bounds, [&] { e.rmw2(Op::MaskSwap, two, two, got, 1, 1, 8); }), "rmw2 at 8");
      check(got[0] == -7 && got[1] == -7, "a failed fetch wrote its result");
      // Cell 9 lies inside rank 0's own, larger window: in range there.
      e.put(two, 1, 0, 9);
      e.flush_all();
    }
    win->unlock_all();
    const auto v = cells_after(*boot, *win, win->size() / 8);
    if (rank == 1)
      for (int i = 0; i < 8; ++i) ok = ok && v[i] == (i == 7 ? 5 : -1);
    if (rank == 0) ok = ok && v[9] == 5 && v[8] == -1 && v[10] == -1;
    win->free();
    return ok;
  });
}

TEST(EpochHandle, UseAfterTheEpochClosedRaisesAndTouchesNothing) {
  run_pair([](int rank, std::shared_ptr<Bootstrap> boot) {
    auto win = zeroed_window(boot);
    bool ok = true;
    const auto check = [&](bool b, const char* what) {
      if (!b) fprintf(stderr, "rank %d failed: %s\n", rank, what);
      ok = ok && b;
    };
    const std::int64_t one = 1;
    std::int64_t got = -7;
    check(raises(ErrorCategory::Epoch, [&] { win->epoch_all(); }), "epoch_all without lock_all");
    check(raises(ErrorCategory::Epoch, [&] { win->epoch(1 - rank); }), "epoch(t) without lock(t)");
    check(raises(ErrorCategory::Epoch, [&] { Epoch().put(&one, 1, 0, 0); }), "a default Epoch");
    if (rank == 0) {
      win->lock_all();
      Epoch e = win->epoch_all();
      e.put(&one, 1, 1, 0);
      check(e.open(), "open inside its epoch");
      win->unlock_all();
      check(!e.open(), "closed after unlock_all");
      check(raises(ErrorCategory::Epoch, [&] { e.put(&one, 1, 1, 1); }), "put after unlock_all");
      check(raises(ErrorCategory::Epoch, [&] { e.get(&got, 1, 1, 0); }), "get after unlock_all");
      check(raises(ErrorCategory::Epoch, [&] { e.fetch_and_op(&one, &got, 1, 2, Op::Sum); }),
            "fetch_and_op after unlock_all");
      check(raises(ErrorCategory::Epoch, [&] { e.flush(1); }), "flush after unlock_all");
      // A new epoch does not revive the old handle: it belongs to the closed one.
      win->lock_all();
      check(raises(ErrorCategory::Epoch, [&] { e.accumulate(&one, 1, 1, 3, Op::Sum); }),
            "accumulate in the next epoch");
      win->unlock_all();
      // Per-target handles: closing another target's lock leaves this one open.
      win->lock(0);
      win->lock(1);
      Epoch e1 = win->epoch(1);
      check(raises(ErrorCategory::Epoch, [&] { win->epoch_all(); }), "epoch_all inside lock(t)");
      win->unlock(0);
      e1.rmw<std::int64_t>(Op::Inc, nullptr, &got, 1, 1, 4);
      check(got == 0, "the handle of target 1 after unlock(0)");
      e1.flush(1);
      win->unlock(1);
      check(raises(ErrorCategory::Epoch, [&] { e1.rmw<std::int64_t>(Op::Inc, nullptr, &got, 1, 1, 4); }),
            "rmw after unlock(1)");
      check(got == 0, "a refused fetch wrote its result");
    }
    const auto v = cells_after(*boot, *win, 8);
    if (rank == 1) check(v[0] == 1 && v[1] == 0 && v[2] == 0 && v[3] == 0 && v[4] == 1, "rank 1's cells");
    win->free();
    return ok;
  });
}

TEST(EpochHandle, AForkedChildCannotUseItsParentsHandle) {
  // The child of fork() still maps the window's memory: a handle that only
  // compared the epoch would let it write into the parent's window.
  run_pair([](int rank, std::shared_ptr<Bootstrap> boot) {
    auto win = zeroed_window(boot);
    bool ok = true;
    if (rank == 0) {
      win->lock_all();
      Epoch e = win->epoch_all();
      const pid_t child = ::fork();
      if (child == 0) {
        alarm(10);  // not inherited from the rank's alarm
        const std::int64_t v = 99;
        bool refused = false;
        try {
          e.put(&v, 1, 1, 0);
        } catch (const Error& err) {
          refused = err.category() == ErrorCategory::Epoch;
        }
        ::_exit(refused ? 0 : 1);
      }
      int status = 0;
      ok = child > 0 && ::waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
      const std::int64_t one = 1;
      e.put(&one, 1, 1, 1);  // the parent's handle still works
      e.flush(1);
      win->unlock_all();
    }
    const auto v = cells_after(*boot, *win, 2);
    if (rank == 1) ok = v[0] == 0 && v[1] == 1;
    win->free();
    return ok;
  });
}

TEST(EpochHandle, HandleAndWindowAtomicsOnOneCounterLoseNoUpdate) {
  // Rank 0 counts through its handle, rank 1 through Window::fetch_and_op,
  // both on rank 0's cell, each also on the other's way at times: every
  // ticket is unique and the final count is exact only if both ways are
  // one kind of atomic on that memory.
  run_pair([](int rank, std::shared_ptr<Bootstrap> boot) {
    auto win = zeroed_window(boot);
    constexpr int kPerRank = 50000;
    std::vector<std::int64_t> got;
    got.reserve(kPerRank);
    win->lock_all();
    Epoch e = win->epoch_all();
    const std::int64_t one = 1;
    for (int i = 0; i < kPerRank; ++i) {
      std::int64_t old = -1;
      if ((rank == 0) != (i % 16 == 0))
        e.fetch_and_op(&one, &old, 0, 0, Op::Sum);
      else
        win->fetch_and_op(&one, &old, Dtype::Int64, 0, 0, Op::Sum);
      got.push_back(old);
    }
    e.flush(0);
    win->unlock_all();
    // Tickets as a bitmap (12.5 KB: the socketpair's buffer holds it; the
    // tickets themselves would not, and both ranks write before they read).
    bool ok = true;
    std::string mine(2 * kPerRank / 8, '\0');
    for (const std::int64_t v : got) {
      if (v < 0 || v >= 2 * kPerRank || (mine[v / 8] >> (v % 8) & 1)) ok = false;
      else mine[v / 8] = static_cast<char>(mine[v / 8] | 1 << (v % 8));
    }
    const auto all = boot->allgather(mine);
    for (std::size_t i = 0; i < mine.size(); ++i)
      if ((all[0][i] & all[1][i]) != 0 || static_cast<unsigned char>(all[0][i] | all[1][i]) != 0xff) ok = false;
    win->sync();
    if (rank == 0) ok = ok && *static_cast<std::int64_t*>(win->base()) == 2 * kPerRank;
    win->free();
    return ok;
  });
}

TEST(EpochHandle, OpsOutsideTheDeclaredSetAreRefused) {
  run_pair([](int rank, std::shared_ptr<Bootstrap> boot) {
    auto win = zeroed_window(boot, {{"accumulate_ops", "fetch_and_op:sum"}});
    win->lock_all();
    Epoch e = win->epoch_all();
    const std::int64_t one = 1;
    std::int64_t got = -7;
    bool ok = e.direct();
    e.fetch_and_op(&one, &got, 1 - rank, 0, Op::Sum);
    ok = ok && got == 0;
    ok = ok && raises(ErrorCategory::OpSet, [&] { e.accumulate(&one, 1, 1 - rank, 1, Op::Sum); });
    ok = ok && raises(ErrorCategory::OpSet, [&] { e.fetch_and_op(&one, &got, 1 - rank, 1, Op::Replace); });
    ok = ok && raises(ErrorCategory::Argument, [&] { e.fetch_and_op(&one, &got, 1 - rank, 1, Op::Inc); });
    win->unlock_all();
    const auto v = cells_after(*boot, *win, 2);
    ok = ok && v[0] == 1 && v[1] == 0;
    win->free();
    return ok;
  });
}

TEST(EpochHandle, OffTheSharedMemoryPathEveryCallGoesThroughTheWindow) {
  run_pair([](int rank, std::shared_ptr<Bootstrap> boot) {
    auto win = zeroed_window(boot, {{"provider", "shm"}, {"onesided_fast_path", "off"}});
    win->lock_all();
    Epoch e = win->epoch_all();
    bool ok = !e.direct();
    const std::int64_t v = 40 + rank, one = 1;
    std::int64_t got = -7;
    e.put(&v, 1, 1 - rank, 0);
    e.fetch_and_op(&one, &got, 1 - rank, 1, Op::Sum);
    e.flush(1 - rank);
    ok = ok && got == 0;
    ok = ok && raises(ErrorCategory::Bounds, [&] { e.put(&v, 1, 1 - rank, 8); });
    win->unlock_all();
    ok = ok && raises(ErrorCategory::Epoch, [&] { e.put(&v, 1, 1 - rank, 0); });
    boot->barrier();
    win->fence();
    const auto* w = static_cast<const std::int64_t*>(win->base());
    ok = ok && w[0] == 40 + (1 - rank) && w[1] == 1;
    win->fence(mode::kNoSucceed);
    win->free();
    return ok;
  });
}

}  // namespace
