// Windows between two real processes (fork), bootstrapped over a socketpair.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <functional>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "onesided/error.hpp"
#include "onesided/window.hpp"
#include "pair_processes.hpp"

using namespace onesided;

namespace {

using onesided::testing::run_pair;

class WindowTest : public ::testing::TestWithParam<std::string> {};

TEST_P(WindowTest, FetchAndAddFromBothRanksGivesUniqueTickets) {
  const std::string provider = GetParam();
  run_pair([&](int rank, std::shared_ptr<Bootstrap> boot) {
    auto win = Window::allocate(64, 8, {{"provider", provider}}, boot);
    constexpr int kPerRank = 500;
    std::vector<std::int64_t> got;
    win->lock_all();
    const std::int64_t one = 1;
    for (int i = 0; i < kPerRank; ++i) {
      std::int64_t old = -1;
      win->fetch_and_op(&one, &old, Dtype::Int64, 0, 0, Op::Sum);
      win->flush(0);
      got.push_back(old);
    }
    win->unlock_all();
    // Ranks exchange their tickets: together they must be 0 .. 2*kPerRank-1.
    std::string mine(reinterpret_cast<const char*>(got.data()), got.size() * sizeof(std::int64_t));
    auto all = boot->allgather(mine);
    std::vector<bool> seen(2 * kPerRank, false);
    for (const auto& s : all)
      for (std::size_t i = 0; i < s.size() / 8; ++i) {
        std::int64_t v;
        std::memcpy(&v, s.data() + 8 * i, 8);
        if (v < 0 || v >= 2 * kPerRank || seen[v]) return false;
        seen[v] = true;
      }
    win->fence();
    bool ok = true;
    if (rank == 0) ok = *static_cast<std::int64_t*>(win->base()) == 2 * kPerRank;
    win->fence(mode::kNoSucceed);
    win->free();
    return ok;
  });
}

TEST_P(WindowTest, PutGetBoundsAndEpochErrors) {
  const std::string provider = GetParam();
  run_pair([&](int rank, std::shared_ptr<Bootstrap> boot) {
    std::vector<std::int32_t> mem(8 + 2 * rank, -1);  // ranks expose different sizes
    auto win = Window::create(mem.data(), mem.size() * 4, 4, {{"provider", provider}}, boot);
    const int peer = 1 - rank;
    std::int32_t v[2] = {rank * 10 + 1, rank * 10 + 2};
    try {
      win->put(v, 2, Dtype::Int32, peer, 0);
      return false;  // no epoch
    } catch (const Error& e) {
      if (e.category() != ErrorCategory::Epoch) return false;
    }
    win->fence();
    win->put(v, 2, Dtype::Int32, peer, 3);
    const long last = static_cast<long>(win->size_of(peer) / 4) - 2;
    win->put(v, 2, Dtype::Int32, peer, last);  // exactly at the end: legal
    for (std::int64_t bad : {last + 1, std::int64_t{-1}, std::int64_t{1} << 61}) {
      try {
        win->put(v, 2, Dtype::Int32, peer, bad);
        return false;
      } catch (const Error& e) {
        if (e.category() != ErrorCategory::Bounds) return false;
      }
    }
    win->fence();
    const int n = static_cast<int>(mem.size());
    const int p = peer * 10;
    bool ok = mem[2] == -1 && mem[3] == p + 1 && mem[4] == p + 2 && mem[5] == -1 &&
              mem[n - 2] == p + 1 && mem[n - 1] == p + 2;
    std::int32_t back[2] = {};
    win->get(back, 2, Dtype::Int32, peer, 3);
    win->fence(mode::kNoSucceed);
    ok = ok && back[0] == rank * 10 + 1 && back[1] == rank * 10 + 2;
    win->free();
    return ok;
  });
}

TEST_P(WindowTest, ExclusiveLockSerialisesReadModifyWrite) {
  // Both ranks increment a counter at rank 0 with get + put (not atomic) under
  // an exclusive lock: only mutual exclusion keeps the count exact.
  const std::string provider = GetParam();
  run_pair([&](int rank, std::shared_ptr<Bootstrap> boot) {
    auto win = Window::allocate(8, 8, {{"provider", provider}}, boot);
    constexpr int kRounds = 200;
    for (int i = 0; i < kRounds; ++i) {
      win->lock(0, LockType::Exclusive);
      std::int64_t x = 0;
      win->get(&x, 1, Dtype::Int64, 0, 0);
      win->flush(0);
      ++x;
      win->put(&x, 1, Dtype::Int64, 0, 0);
      win->unlock(0);
    }
    boot->barrier();
    win->sync();  // loads of the own window after others' updates (MPI's Win_sync)
    bool ok = rank != 0 || *static_cast<std::int64_t*>(win->base()) == 2 * kRounds;
    win->free();
    return ok;
  });
}

TEST_P(WindowTest, ProgressThreadResumesOnceTheTargetStopsWaiting) {
  // Rank 1 flushes operations back to back, so its progress thread stands
  // aside (its sleeps grown to the longest), then makes no onesided call
  // for kQuiet. The provider moves rank 0's puts and atomics only when
  // rank 1 polls: they complete because its progress thread comes back,
  // well before rank 1 would poll again itself. (The provider path on shm
  // too: on one host the default would be the shared-memory path, which
  // needs no progress at all.)
  const std::string provider = GetParam();
  constexpr auto kQuiet = std::chrono::milliseconds(1500);
  run_pair([&](int rank, std::shared_ptr<Bootstrap> boot) {
    auto win = Window::allocate(64, 8, {{"provider", provider}, {"onesided_fast_path", "off"}}, boot);
    if (win->info().at("onesided_path") != "provider") return false;
    win->lock_all();
    bool ok = true;
    const std::int64_t one = 1;
    if (rank == 1) {
      std::int64_t old = 0;
      for (int i = 0; i < 2000; ++i) {
        win->fetch_and_op(&one, &old, Dtype::Int64, 0, 0, Op::Sum);
        win->flush(0);
      }
      boot->barrier();
      std::this_thread::sleep_for(kQuiet);
    } else {
      boot->barrier();
      const auto t0 = std::chrono::steady_clock::now();
      std::int64_t old = 0;
      for (int i = 0; i < 20; ++i) {
        win->put(&one, 1, Dtype::Int64, 1, 1);
        win->fetch_and_op(&one, &old, Dtype::Int64, 1, 2, Op::Sum);
        win->flush(1);
      }
      ok = std::chrono::steady_clock::now() - t0 < kQuiet / 3;
    }
    win->unlock_all();
    win->free();
    return ok;
  });
}

INSTANTIATE_TEST_SUITE_P(Providers, WindowTest, ::testing::Values("shm", "tcp;ofi_rxm"),
                         [](const auto& info) { return info.param == "shm" ? std::string("shm") : std::string("tcp"); });

}  // namespace

// Bad input on one rank fails creation at every rank alike (same category,
// same message), and no rank is left waiting: run_pair's alarm would kill
// a rank that hung.
namespace {
bool raises_alike(int rank, const std::function<void()>& create, ErrorCategory want, const std::string& needle,
                  Bootstrap& boot) {
  try {
    create();
    fprintf(stderr, "rank %d: no error (wanted '%s')\n", rank, needle.c_str());
    return false;
  } catch (const Error& e) {
    const std::string msg = e.what();
    // Both ranks must see the same text: compare through the bootstrap.
    const auto all = boot.allgather(msg);
    if (e.category() != want || msg.find(needle) == std::string::npos || all[0] != all[1]) {
      fprintf(stderr, "rank %d: %s\n", rank, msg.c_str());
      return false;
    }
    return true;
  }
}
}  // namespace

TEST(WindowCreation, BadInputOnOneRankFailsEveryRank) {
  run_pair([&](int rank, std::shared_ptr<Bootstrap> boot) {
    bool ok = true;
    // An unknown onesided key on rank 1 only.
    Info bad = rank == 1 ? Info{{"onesided_nastty", "1"}} : Info{};
    ok = ok && raises_alike(rank, [&] { Window::allocate(64, 8, bad, boot); }, ErrorCategory::Argument,
                            "failed on rank 1", *boot);
    // A size no process can map, on rank 0 only (it used to wrap to a tiny allocation).
    const std::size_t size = rank == 0 ? ~std::size_t{0} : 64;
    ok = ok && raises_alike(rank, [&] { Window::allocate(size, 8, {{"provider", "tcp;ofi_rxm"}}, boot); },
                            ErrorCategory::Argument, "exceeds the largest", *boot);
    // disp_unit 0 on rank 1, on a Create window.
    std::vector<std::int64_t> mem(4);
    ok = ok && raises_alike(rank, [&] { Window::create(mem.data(), 32, rank == 1 ? 0 : 8, {}, boot); },
                            ErrorCategory::Argument, "disp_unit must be positive", *boot);
    // Settings that must match: accumulate_ops, and alloc_shared_noncontig
    // (differing layouts used to end in SIGBUS).
    Info ops{{"accumulate_ops", rank == 0 ? "fetch_and_op:sum" : "all"}};
    ok = ok && raises_alike(rank, [&] { Window::allocate(64, 8, ops, boot); }, ErrorCategory::Argument,
                            "must be equal on every rank", *boot);
    Info layout{{"alloc_shared_noncontig", rank == 0 ? "true" : "false"}};
    ok = ok && raises_alike(rank, [&] { Window::allocate_shared(64, 8, layout, boot); }, ErrorCategory::Argument,
                            "alloc_shared_noncontig", *boot);
    // A caller's own verdict, agreed the same way.
    ok = ok && raises_alike(rank, [&] {
      if (rank == 0) Window::fail_creation(*boot, Error(ErrorCategory::Bounds, "python said no"));
      Window::allocate(64, 8, {}, boot);
    }, ErrorCategory::Bounds, "python said no", *boot);
    // And the group is still usable afterwards.
    auto win = Window::allocate(64, 8, {}, boot);
    win->free();
    return ok;
  });
}

TEST(WindowCreation, OperationSizesAreOverflowChecked) {
  run_pair([&](int, std::shared_ptr<Bootstrap> boot) {
    auto win = Window::allocate(64, 8, {}, boot);
    win->lock_all();
    std::int64_t v = 1;
    bool ok = false;
    try {
      // count x 8 wraps to 0 in 64 bits: must not pass as an empty put.
      win->put(&v, std::size_t{1} << 61, Dtype::Int64, 0, 0);
    } catch (const Error& e) {
      ok = e.category() == ErrorCategory::Argument && std::string(e.what()).find("overflows") != std::string::npos;
    }
    win->unlock_all();
    win->free();
    return ok;
  });
}

TEST(WindowCreation, ProcNullIsANoOpTargetEverywhere) {
  run_pair([&](int rank, std::shared_ptr<Bootstrap> boot) {
    std::vector<std::int64_t> mem(4, 7);
    auto win = Window::create(mem.data(), 32, 8, {}, boot);
    std::int64_t v = 1, got = -5;
    // No epoch is needed, nothing is touched, and a request is complete.
    win->lock(kProcNull);
    win->put(&v, 1, Dtype::Int64, kProcNull, 1 << 20);
    win->get(&got, 1, Dtype::Int64, kProcNull, -3);
    win->accumulate(&v, 1, Dtype::Int64, kProcNull, 0, Op::Sum);
    win->fetch_and_op(&v, &got, Dtype::Int64, kProcNull, 0, Op::Sum);
    Request req;
    win->put(&v, 1, Dtype::Int64, kProcNull, 0, &req);
    const bool done = req.test();
    win->flush(kProcNull);
    win->unlock(kProcNull);
    win->fence();
    win->fence(mode::kNoSucceed);
    bool ok = done && got == -5 && mem == std::vector<std::int64_t>(4, 7);
    (void)rank;
    win->free();
    return ok;
  });
}

// MPI 4.1: mpi_accumulate_granularity is checked at the edge, must be equal
// on every rank, and is reported.
TEST(WindowCreation, AccumulateGranularityIsCheckedAgreedAndReported) {
  run_pair([&](int rank, std::shared_ptr<Bootstrap> boot) {
    bool ok = true;
    for (const char* bad : {"-1", "x", "", "1e3", "18446744073709551616"}) {
      Info info{{"mpi_accumulate_granularity", rank == 1 ? bad : "8"}};
      ok = ok && raises_alike(rank, [&] { Window::allocate(64, 8, info, boot); }, ErrorCategory::Argument,
                              "failed on rank 1: mpi_accumulate_granularity must be a non-negative integer", *boot);
    }
    Info differ{{"mpi_accumulate_granularity", rank == 0 ? "8" : "16"}};
    ok = ok && raises_alike(rank, [&] { Window::allocate(64, 8, differ, boot); }, ErrorCategory::Argument,
                            "must be equal on every rank", *boot);
    auto win = Window::allocate(64, 8, {{"mpi_accumulate_granularity", "24"}}, boot);
    ok = ok && win->info().at("mpi_accumulate_granularity") == "24";
    win->free();
    return ok;
  });
}

// MPI 4.1: shared_query on every flavor gives the memory this rank reaches by
// load/store (all of a shared mapping; its own segment otherwise), else
// size 0 and a null base, with the rank's disp_unit.
TEST(WindowCreation, SharedQueryOnEveryFlavor) {
  run_pair([&](int rank, std::shared_ptr<Bootstrap> boot) {
    const int other = 1 - rank;
    const int unit = 8 * (rank + 1), other_unit = 8 * (other + 1);
    bool ok = true;
    std::vector<std::int64_t> mem(4);
    auto created = Window::create(mem.data(), 32, unit, {}, boot);
    SharedMemory own = created->shared_query(rank), theirs = created->shared_query(other);
    ok = ok && own.base == mem.data() && own.size == 32 && own.disp_unit == unit;
    ok = ok && theirs.base == nullptr && theirs.size == 0 && theirs.disp_unit == other_unit;
    created->free();
    for (const char* shared_memory : {"on", "off"}) {
      auto win = Window::allocate(32, unit, {{"onesided_shared_memory", shared_memory}}, boot);
      const bool mapped = win->path_name() == "shared-memory";
      ok = ok && mapped == (std::string(shared_memory) == "on");
      own = win->shared_query(rank);
      theirs = win->shared_query(other);
      ok = ok && own.base == win->base() && own.size == 32 && theirs.disp_unit == other_unit;
      ok = ok && (mapped ? theirs.base != nullptr && theirs.size == 32 : theirs.base == nullptr && theirs.size == 0);
      win->free();
    }
    auto dynamic = Window::create_dynamic({}, boot);
    dynamic->attach(mem.data(), 32);
    for (int r : {rank, other, kProcNull}) ok = ok && dynamic->shared_query(r).base == nullptr;
    dynamic->detach(mem.data());
    dynamic->free();
    return ok;
  });
}

// A rank that dies (SIGKILL) is noticed by a rank waiting for it on the same
// host, whatever started them: the wait raises, naming the dead rank,
// within seconds, and the window is then dead (later calls raise, Free
// releases this rank's part). Not run_pair: the dying rank must not report.
namespace {
void survivor_sees_death(const Info& info, bool lock) {
  run_pair(
      [&](int rank, std::shared_ptr<Bootstrap> boot) {
        auto win = Window::allocate(64, 8, info, boot);
        if (rank == 1) {
          if (lock) win->lock(0, LockType::Exclusive);
          boot->barrier();
          ::kill(::getpid(), SIGKILL);
        }
        boot->barrier();
        const auto t0 = std::chrono::steady_clock::now();
        std::string what;
        try {
          std::int64_t one = 1, got = 0;
          if (lock) {
            win->lock(0, LockType::Exclusive);
          } else {
            win->lock_all();
            for (int i = 0; i < 1000000; ++i) {
              win->fetch_and_op(&one, &got, Dtype::Int64, 1, 0, Op::Sum);
              win->flush(1);
            }
          }
        } catch (const Error& e) {
          what = e.what();
        }
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        bool later_raises = false;
        try {
          win->flush_all();
        } catch (const Error&) {
          later_raises = true;
        }
        try {
          win->free();
        } catch (const Error&) {
        }
        fprintf(stderr, "survivor: %.2f s: %s\n", s, what.c_str());
        return what.find("rank 1") != std::string::npos && what.find("died") != std::string::npos && s < 5 &&
               later_raises;
      },
      1);
}
}  // namespace

TEST(RankDeath, WaiterOnALockTheDeadRankHeldRaises) { survivor_sees_death({}, true); }
TEST(RankDeath, WaiterOnALockTheDeadRankHeldRaisesWithLockMessages) {
  survivor_sees_death({{"onesided_shared_memory", "off"}}, true);
}
TEST(RankDeath, FlushToADeadTargetRaises) { survivor_sees_death({{"onesided_shared_memory", "off"}}, false); }

// A request's wait watches its target as window waits do: a get-accumulate
// (it needs the target's progress on every path) to a dead rank raises,
// naming it, within seconds; Test loops do too.
namespace {
void request_to_the_dead_raises(bool test_loop) {
  run_pair(
      [&](int rank, std::shared_ptr<Bootstrap> boot) {
        auto win = Window::allocate(64, 8, {{"onesided_shared_memory", "off"}}, boot);
        if (rank == 0) win->lock_all();
        boot->barrier();
        if (rank == 1) ::kill(::getpid(), SIGKILL);
        const auto t0 = std::chrono::steady_clock::now();
        std::string what;
        try {
          std::int64_t one = 1, got = 0;
          for (int i = 0; i < 1000000; ++i) {
            Request req;
            win->get_accumulate(&one, &got, 1, Dtype::Int64, 1, 0, Op::Sum, &req);
            if (test_loop) {
              while (!req.test()) {
              }
            } else {
              req.wait();
            }
          }
        } catch (const Error& e) {
          what = e.what();
        }
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        fprintf(stderr, "survivor: %.2f s: %s\n", s, what.c_str());
        return what.find("rank 1") != std::string::npos && what.find("died") != std::string::npos && s < 5;
      },
      1);
}
}  // namespace

TEST(RankDeath, RequestWaitOnADeadTargetRaises) { request_to_the_dead_raises(false); }
TEST(RankDeath, RequestTestLoopOnADeadTargetRaises) { request_to_the_dead_raises(true); }
