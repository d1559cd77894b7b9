// onesided_bench: OSU-style latency of onesided's one-sided operations from
// C++, each measured in the same run beside raw libfabric calls and the CPU
// floor, between two processes on one host.
//
//   onesided_bench [--iters N] [--reps R] [--quick] [--no-tcp] [--netns ORIGIN,TARGET]
//                  [--rows WORD,...] [--columns NAME,...]
//
// --netns puts each rank in a network namespace of its own before it touches
// libfabric (/run/netns/NAME, as `ip netns add` makes them: two simulated
// hosts, tests/hosts/netns.py) and measures only the tcp columns (and the CPU
// floor), over the namespaces' interfaces instead of 127.0.0.1.
//
// --rows and --columns measure only some rows (by the first word of their
// name: put, get, accumulate, get_accumulate, fetch_and_op,
// compare_and_swap, rmw, rmw2) and columns (by name, as in the table:
// "onesided shm,raw shm"), so that a profiler sees one kind of work.
//
// The program forks two ranks itself (before either touches libfabric,
// which is not fork-safe), joined by a socketpair Bootstrap. Rank 0 is the
// origin, rank 1 the passive target. Every figure is one operation on an
// 8-byte element (int64) followed by a flush of the target, in microseconds:
// the median over R repetitions of N operations, each repetition after a
// warm-up. The columns of one row are measured interleaved (row by row,
// repetition by repetition), so a noisy moment hits them all.
//
// Columns:
//   CPU floor      the same update done with one CPU instruction (or CAS
//                  loop; a put or get: store or load + full fence) on a
//                  cache line in a MAP_SHARED page, while the target
//                  process spins reading that line
//   fast path      onesided, Window::allocate with default info: one host,
//                  so the intra-node fast path (shared memory, CPU atomics)
//   epoch          the same kind of window through an Epoch handle
//                  (onesided/epoch.hpp) taken after lock_all: the epoch's
//                  checks once, per call the bounds check and the op inline
//   onesided shm   onesided over libfabric's shm provider
//                  (info provider=shm, onesided_fast_path=off)
//   raw shm        the fewest libfabric calls doing the same (raw_fabric.cpp),
//                  each followed by spinning on fi_cq_read until it completes
//   onesided tcp / raw tcp: the same over tcp;ofi_rxm on 127.0.0.1
//
// Target behaviour, each at its best: for onesided the target's main thread
// sleeps (futex) and onesided's progress thread serves the traffic; for raw
// libfabric the target's main thread polls its CQ (shm and tcp progress
// only when polled); for the CPU floor it spins reading the cache line.
//
// Every result is checked (fetched values against a model of the target
// cells, and the target's final cell values), so a wrong implementation
// fails the run: the exit status is non-zero.
//
// The parts: options.cpp (command line), control.cpp (the page the two
// processes share and the target's loop), rows.hpp (operations, cells, the
// timed loop), ops.hpp (one op + completion per kind of column), columns.hpp,
// measure.cpp (the interleaved measurement) and report.cpp (the table).
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "columns.hpp"
#include "control.hpp"
#include "measure.hpp"
#include "onesided/runtime.hpp"
#include "onesided/window.hpp"
#include "options.hpp"
#include "pair_bootstrap.hpp"
#include "raw_fabric.hpp"
#include "report.hpp"

namespace onesided_bench {
namespace {

// Moves the calling process into the network namespace `name` (ip netns).
void enter_netns(const std::string& name) {
  const std::string path = "/run/netns/" + name;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0)
    throw std::runtime_error("cannot enter network namespace " + path + ": " + std::strerror(errno));
  ::close(fd);
}

// ---- one rank -----------------------------------------------------------------

int rank_main(int rank, int fd, Control& ctrl, const Options& opt) {
  if (opt.hosts()) enter_netns(opt.netns[static_cast<std::size_t>(rank)]);
  auto boot = std::make_shared<PairBootstrap>(rank, fd);
  const std::string load_before = load_average();
  // onesided's windows first: opening its shm transport removes /dev/shm
  // leftovers named after this pid, which would include a raw shm endpoint
  // opened before it.
  const onesided::Info fast_info{};
  const onesided::Info shm_info{{"provider", "shm"}, {"onesided_fast_path", "off"}};
  const onesided::Info tcp_info{{"provider", "tcp;ofi_rxm"}};
  // Across (simulated) hosts only tcp: neither shared memory nor shm spans them.
  const bool local = !opt.hosts();
  std::unique_ptr<Window> fast, epoch, shm, tcp;
  if (local) fast = Window::allocate(64, 8, fast_info, boot);
  if (local) epoch = Window::allocate(64, 8, fast_info, boot);  // cells of its own: each column has its model
  if (local) shm = Window::allocate(64, 8, shm_info, boot);
  if (opt.tcp || !local) tcp = Window::allocate(64, 8, tcp_info, boot);
  if (local && fast->info().at("onesided_fast_path") != "on")
    throw std::runtime_error("the default window did not take the intra-node fast path (is "
                             "ONESIDED_FAST_PATH=off or FI_PROVIDER set?)");
  if (local && (shm->info().at("onesided_fast_path") != "off" || shm->provider() != "shm"))
    throw std::runtime_error("the shm window is not on libfabric's shm provider");
  std::unique_ptr<RawFabric> raw_shm, raw_tcp;
  if (local) raw_shm = std::make_unique<RawFabric>("shm", false, *boot);
  if (tcp) raw_tcp = std::make_unique<RawFabric>("tcp;ofi_rxm", local, *boot);

  std::vector<std::unique_ptr<Column>> cols;
  cols.push_back(std::make_unique<FloorColumn>(ctrl));
  if (local) {
    cols.push_back(std::make_unique<OnesidedColumn>("fast path", fast.get()));
    cols.push_back(std::make_unique<EpochColumn>("epoch", epoch.get()));
    epoch->lock_all();
    const bool direct = epoch->epoch_all().direct();
    epoch->unlock_all();
    if (!direct) throw std::runtime_error("the epoch column's handle forwards to the Window (not direct)");
    cols.push_back(std::make_unique<OnesidedColumn>("onesided shm", shm.get()));
    cols.push_back(std::make_unique<RawColumn>("raw shm", kRawShm, raw_shm.get()));
  }
  if (tcp) {
    cols.push_back(std::make_unique<OnesidedColumn>("onesided tcp", tcp.get()));
    cols.push_back(std::make_unique<RawColumn>("raw tcp", kRawTcp, raw_tcp.get()));
  }

  std::erase_if(cols, [&](const auto& c) { return !opt.wants_column(c->name()); });
  if (cols.empty()) throw std::runtime_error("--columns names no column of this run");

  Times times;
  if (rank == 0) {
    times = measure(ctrl, cols, opt);
    set_phase(ctrl, kDone);
  } else {
    target_loop(ctrl, raw_shm.get(), raw_tcp.get());
  }

  // Verification: the target's final cells against the origin's model.
  std::string mine;
  for (const auto& c : cols) {
    const auto v = c->local_cells();
    mine.append(reinterpret_cast<const char*>(v.data()), sizeof v);
  }
  const std::string theirs = boot->allgather(mine)[1];
  int status = 0;
  if (rank == 0) {
    std::vector<std::string> notes;
    if (fast) notes.push_back("fast path:    " + describe(*fast));
    if (shm) notes.push_back("onesided shm: " + describe(*shm));
    if (tcp) notes.push_back("onesided tcp: " + describe(*tcp));
    notes.push_back("raw: fi_writemsg (FI_DELIVERY_COMPLETE) / fi_read / fi_atomicmsg FI_SUM (FI_DELIVERY_COMPLETE) "
                    "/ fi_fetch_atomic FI_SUM / fi_compare_atomic FI_CSWAP, FI_MSWAP, each + fi_cq_read until done");
    print_table(times, cols, opt, notes, load_before);
    std::printf("\n");
    for (std::size_t k = 0; k < cols.size(); ++k) {
      Column& c = *cols[k];
      std::array<std::int64_t, kCellsUsed> at_target;
      std::memcpy(at_target.data(), theirs.data() + k * sizeof at_target, sizeof at_target);
      const auto want = c.model.cells();
      std::string problem = c.checker.failures
                                ? std::to_string(c.checker.failures) + " wrong results, first: " + c.checker.first
                                : std::string();
      if (at_target != want) {
        static const char* names[] = {"put cell", "sum cell", "cas cell", "mswap cell"};
        for (int i = 0; i < kCellsUsed; ++i)
          if (at_target[i] != want[i])
            problem += (problem.empty() ? "" : "; ") + std::string(names[i]) + " holds " +
                       std::to_string(at_target[i]) + ", expected " + std::to_string(want[i]);
      }
      if (!problem.empty()) {
        std::printf("VERIFICATION FAILED (%s): %s\n", c.name().c_str(), problem.c_str());
        status = 1;
      }
    }
    if (status == 0)
      std::printf("verified: every fetched value and the target's final cells match (sum cell %lld)\n",
                  static_cast<long long>(cols[0]->model.sum));
    std::fflush(stdout);
  }

  boot->barrier();
  raw_tcp.reset();
  raw_shm.reset();
  boot->barrier();
  if (tcp) tcp->free();
  if (shm) shm->free();
  if (epoch) epoch->free();
  if (fast) fast->free();
  tcp.reset();
  shm.reset();
  epoch.reset();
  fast.reset();
  onesided::shutdown();  // closes the providers (and their /dev/shm regions)
  return status;
}

}  // namespace
}  // namespace onesided_bench

int main(int argc, char** argv) {
  using namespace onesided_bench;
  const Options opt = parse(argc, argv);
  void* page = ::mmap(nullptr, sizeof(Control), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) {
    std::perror("mmap");
    return 2;
  }
  Control* ctrl = new (page) Control();
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) {
    std::perror("socketpair");
    return 2;
  }
  std::fflush(stdout);
  const pid_t parent = ::getpid();
  pid_t pids[2];
  for (int rank = 0; rank < 2; ++rank) {
    pids[rank] = ::fork();
    if (pids[rank] < 0) {
      std::perror("fork");
      return 2;
    }
    if (pids[rank] == 0) {
      // A killed parent (a test timeout) takes the ranks with it.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(3);
      ::close(fds[1 - rank]);
      int status;
      try {
        status = rank_main(rank, fds[rank], *ctrl, opt);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "onesided_bench rank %d: %s\n", rank, e.what());
        status = 2;
      }
      std::fflush(stdout);
      std::fflush(stderr);
      ::_exit(status);
    }
  }
  ::close(fds[0]);
  ::close(fds[1]);
  // A rank that fails leaves the other waiting for it: stop that one too.
  int result = 0, alive = 2;
  while (alive > 0) {
    int wstatus = 0;
    const pid_t pid = ::wait(&wstatus);
    if (pid < 0) break;
    const int rank = pid == pids[0] ? 0 : pid == pids[1] ? 1 : -1;
    if (rank < 0) continue;
    --alive;
    if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
      if (result == 0) {
        std::fprintf(stderr, "onesided_bench: rank %d failed (wait status %d)\n", rank, wstatus);
        result = 1;
      }
      if (alive > 0) ::kill(pids[1 - rank], SIGKILL);
    }
  }
  return result;
}
