// onesided_bench: OSU-style latency of onesided's one-sided operations from
// C++, each measured in the same run beside raw libfabric calls and the CPU
// floor, between two processes on one host.
//
//   onesided_bench [--iters N] [--reps R] [--quick] [--no-tcp] [--netns ORIGIN,TARGET]
//
// --netns puts each rank in a network namespace of its own before it touches
// libfabric (/run/netns/NAME, as `ip netns add` makes them: two simulated
// hosts, tests/hosts/netns.py) and measures only the tcp columns (and the CPU
// floor), over the namespaces' interfaces instead of 127.0.0.1.
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
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "onesided/runtime.hpp"
#include "onesided/window.hpp"
#include "pair_bootstrap.hpp"
#include "raw_fabric.hpp"

namespace onesided_bench {
namespace {

using onesided::Dtype;
using onesided::Op;
using onesided::Window;

// ---- options ------------------------------------------------------------------

struct Options {
  long iters = 10000;
  int reps = 5;
  bool tcp = true;
  std::array<std::string, 2> netns;  // empty: both ranks stay in this namespace
  std::string command;
  bool hosts() const { return !netns[0].empty(); }
};

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s [--iters N] [--reps R] [--quick] [--no-tcp] [--netns ORIGIN,TARGET]\n", argv0);
  std::exit(2);
}

// Moves the calling process into the network namespace `name` (ip netns).
void enter_netns(const std::string& name) {
  const std::string path = "/run/netns/" + name;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0)
    throw std::runtime_error("cannot enter network namespace " + path + ": " + std::strerror(errno));
  ::close(fd);
}

Options parse(int argc, char** argv) {
  Options o;
  long iters = -1, reps = -1;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> long {
      if (i + 1 >= argc) usage(argv[0]);
      char* end = nullptr;
      const long v = std::strtol(argv[++i], &end, 10);
      if (!end || *end || v <= 0) usage(argv[0]);
      return v;
    };
    if (a == "--iters") iters = value();
    else if (a == "--reps") reps = value();
    else if (a == "--quick") quick = true;
    else if (a == "--no-tcp") o.tcp = false;
    else if (a == "--netns" && i + 1 < argc) {
      const std::string v = argv[++i];
      const auto comma = v.find(',');
      if (comma == std::string::npos || comma == 0 || comma + 1 == v.size()) usage(argv[0]);
      o.netns = {v.substr(0, comma), v.substr(comma + 1)};
    } else usage(argv[0]);
  }
  if (quick) {
    o.iters = 1000;
    o.reps = 3;
  }
  if (iters > 0) o.iters = iters;
  if (reps > 0) o.reps = static_cast<int>(reps);
  for (int i = 0; i < argc; ++i) o.command += (i ? " " : "") + std::string(i ? argv[i] : "onesided_bench");
  return o;
}

// ---- control page shared by the two processes (mapped before fork) ------------

enum Phase : std::uint32_t { kIdle, kSpin, kRawShm, kRawTcp, kDone };

struct Control {
  alignas(64) std::atomic<std::uint32_t> phase{kIdle};  // set by the origin (a futex word)
  alignas(64) std::atomic<std::uint32_t> ack{kIdle};    // the phase the target has entered
  alignas(64) std::atomic<std::int64_t> floor[8]{};     // the CPU floor's cells: one cache line
};

void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t value) {
  // Not FUTEX_PRIVATE: the word is shared between processes.
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT, value, nullptr, nullptr, 0);
}
void futex_wake(std::atomic<std::uint32_t>* word) {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

// Origin: switch the target to `p` and wait until it got there.
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

// ---- operations ---------------------------------------------------------------

enum class Row { Put, Get, Accumulate, GetAccumulate, FetchAndOp, CompareAndSwap, Rmw, Rmw2 };
struct RowInfo {
  Row row;
  const char* name;
};
constexpr RowInfo kRows[] = {
    {Row::Put, "put 8 B"},
    {Row::Get, "get 8 B"},
    {Row::Accumulate, "accumulate SUM int64"},
    {Row::GetAccumulate, "get_accumulate SUM int64"},
    {Row::FetchAndOp, "fetch_and_op SUM int64"},
    {Row::CompareAndSwap, "compare_and_swap int64"},
    {Row::Rmw, "rmw INC int64"},
    {Row::Rmw2, "rmw2 MASK_SWAP int64"},
};
constexpr int kNumRows = static_cast<int>(std::size(kRows));

// Target cells: 0 put/get, 1 the SUM/INC counter, 2 the compare-and-swap
// chain, 3 the mask-swap chain. The origin keeps what they must hold.
enum Cell : int { kPutCell = 0, kSumCell = 1, kCasCell = 2, kMswapCell = 3, kCellsUsed = 4 };
struct Model {
  std::int64_t put = 0, sum = 0, cas = 0, mswap = 0;
  std::array<std::int64_t, kCellsUsed> cells() const { return {put, sum, cas, mswap}; }
};

struct Checker {
  long failures = 0;
  std::string first;
  void fail(const char* what, std::int64_t got, std::int64_t want) {
    if (failures++ == 0)
      first = std::string(what) + " returned " + std::to_string(got) + ", expected " + std::to_string(want);
  }
};

// The timed loop, written once for every column: `ops` does one operation
// plus its completion (flush). Inlined per column type.
template <class Ops>
void run_row(Ops& ops, Row row, long n, Model& m, Checker& c) {
  switch (row) {
    case Row::Put:
      for (long i = 0; i < n; ++i) ops.put(++m.put, kPutCell);
      break;
    case Row::Get:
      for (long i = 0; i < n; ++i)
        if (const auto r = ops.get(kPutCell); r != m.put) [[unlikely]] c.fail("get", r, m.put);
      break;
    case Row::Accumulate:
      for (long i = 0; i < n; ++i) {
        ops.accumulate(1, kSumCell);
        ++m.sum;
      }
      break;
    case Row::GetAccumulate:
      for (long i = 0; i < n; ++i, ++m.sum)
        if (const auto r = ops.get_accumulate(1, kSumCell); r != m.sum) [[unlikely]] c.fail("get_accumulate", r, m.sum);
      break;
    case Row::FetchAndOp:
      for (long i = 0; i < n; ++i, ++m.sum)
        if (const auto r = ops.fetch_and_op(1, kSumCell); r != m.sum) [[unlikely]] c.fail("fetch_and_op", r, m.sum);
      break;
    case Row::CompareAndSwap:
      for (long i = 0; i < n; ++i, ++m.cas)
        if (const auto r = ops.cas(m.cas, m.cas + 1, kCasCell); r != m.cas) [[unlikely]] c.fail("compare_and_swap", r, m.cas);
      break;
    case Row::Rmw:
      for (long i = 0; i < n; ++i, ++m.sum)
        if (const auto r = ops.rmw_inc(kSumCell); r != m.sum) [[unlikely]] c.fail("rmw INC", r, m.sum);
      break;
    case Row::Rmw2:
      for (long i = 0; i < n; ++i, ++m.mswap)
        if (const auto r = ops.mswap(~std::int64_t{0}, m.mswap + 1, kMswapCell); r != m.mswap) [[unlikely]]
          c.fail("rmw2 MASK_SWAP", r, m.mswap);
      break;
  }
}

// CPU floor: the instruction each operation boils down to on shared memory,
// with the full fence a flush implies (the lock-prefixed read-modify-writes
// are fences already; a put or get needs one after its store or load).
struct FloorOps {
  std::atomic<std::int64_t>* cell;
  void put(std::int64_t v, int i) {
    cell[i].store(v, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  std::int64_t get(int i) {
    const std::int64_t v = cell[i].load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return v;
  }
  void accumulate(std::int64_t v, int i) { cell[i].fetch_add(v, std::memory_order_seq_cst); }
  std::int64_t get_accumulate(std::int64_t v, int i) { return cell[i].fetch_add(v, std::memory_order_seq_cst); }
  std::int64_t fetch_and_op(std::int64_t v, int i) { return cell[i].fetch_add(v, std::memory_order_seq_cst); }
  std::int64_t cas(std::int64_t cmp, std::int64_t swp, int i) {
    cell[i].compare_exchange_strong(cmp, swp, std::memory_order_seq_cst);
    return cmp;  // the old value either way
  }
  std::int64_t rmw_inc(int i) { return cell[i].fetch_add(1, std::memory_order_seq_cst); }
  std::int64_t mswap(std::int64_t mask, std::int64_t swp, int i) {
    std::int64_t old = cell[i].load(std::memory_order_relaxed);
    while (!cell[i].compare_exchange_weak(old, (old & ~mask) | (swp & mask), std::memory_order_seq_cst,
                                          std::memory_order_relaxed)) {
    }
    return old;
  }
};

// onesided: the public API, each op followed by flush(target).
struct OnesidedOps {
  Window* w;
  static constexpr int t = 1;
  std::int64_t o = 0, c = 0, r = 0;
  void put(std::int64_t v, int i) {
    o = v;
    w->put(&o, 1, Dtype::Int64, t, i);
    w->flush(t);
  }
  std::int64_t get(int i) {
    w->get(&r, 1, Dtype::Int64, t, i);
    w->flush(t);
    return r;
  }
  void accumulate(std::int64_t v, int i) {
    o = v;
    w->accumulate(&o, 1, Dtype::Int64, t, i, Op::Sum);
    w->flush(t);
  }
  std::int64_t get_accumulate(std::int64_t v, int i) {
    o = v;
    w->get_accumulate(&o, &r, 1, Dtype::Int64, t, i, Op::Sum);
    w->flush(t);
    return r;
  }
  std::int64_t fetch_and_op(std::int64_t v, int i) {
    o = v;
    w->fetch_and_op(&o, &r, Dtype::Int64, t, i, Op::Sum);
    w->flush(t);
    return r;
  }
  std::int64_t cas(std::int64_t cmp, std::int64_t swp, int i) {
    c = cmp;
    o = swp;
    w->compare_and_swap(&o, &c, &r, Dtype::Int64, t, i);
    w->flush(t);
    return r;
  }
  std::int64_t rmw_inc(int i) {
    w->rmw(Op::Inc, nullptr, &r, 1, Dtype::Int64, t, i);
    w->flush(t);
    return r;
  }
  std::int64_t mswap(std::int64_t mask, std::int64_t swp, int i) {
    c = mask;
    o = swp;
    w->rmw2(Op::MaskSwap, &c, &o, &r, 1, Dtype::Int64, t, i);
    w->flush(t);
    return r;
  }
};

// Raw libfabric: each call posts one operation and waits for its completion.
struct RawOps {
  RawFabric* f;
  void put(std::int64_t v, int i) { f->put(v, i); }
  std::int64_t get(int i) { return f->get(i); }
  void accumulate(std::int64_t v, int i) { f->atomic_sum(v, i); }
  std::int64_t get_accumulate(std::int64_t v, int i) { return f->fetch_sum(v, i); }
  std::int64_t fetch_and_op(std::int64_t v, int i) { return f->fetch_sum(v, i); }
  std::int64_t cas(std::int64_t cmp, std::int64_t swp, int i) { return f->cswap(cmp, swp, i); }
  std::int64_t rmw_inc(int i) { return f->fetch_sum(1, i); }
  std::int64_t mswap(std::int64_t mask, std::int64_t swp, int i) { return f->mswap(mask, swp, i); }
};

// ---- columns ------------------------------------------------------------------

class Column {
 public:
  Column(std::string name, Phase phase) : name_(std::move(name)), phase_(phase) {}
  virtual ~Column() = default;
  const std::string& name() const { return name_; }
  Phase phase() const { return phase_; }
  virtual void begin() {}  // open the access epoch (outside the timing)
  virtual void end() {}
  virtual void run(Row row, long n) = 0;
  // This rank's cells (at the target: what the origin's ops changed).
  virtual std::array<std::int64_t, kCellsUsed> local_cells() const = 0;
  Model model;
  Checker checker;

 private:
  std::string name_;
  Phase phase_;
};

class FloorColumn final : public Column {
 public:
  explicit FloorColumn(Control& c) : Column("CPU floor", kSpin), ops_{c.floor} {}
  void run(Row row, long n) override { run_row(ops_, row, n, model, checker); }
  std::array<std::int64_t, kCellsUsed> local_cells() const override {
    std::array<std::int64_t, kCellsUsed> v;
    for (int i = 0; i < kCellsUsed; ++i) v[i] = ops_.cell[i].load();
    return v;
  }

 private:
  FloorOps ops_;
};

class OnesidedColumn final : public Column {
 public:
  OnesidedColumn(std::string name, Window* w) : Column(std::move(name), kIdle), ops_{w} {}
  void begin() override { ops_.w->lock_all(); }
  void end() override { ops_.w->unlock_all(); }
  void run(Row row, long n) override { run_row(ops_, row, n, model, checker); }
  std::array<std::int64_t, kCellsUsed> local_cells() const override {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    std::array<std::int64_t, kCellsUsed> v;
    std::memcpy(v.data(), ops_.w->base(), sizeof v);
    return v;
  }

 private:
  OnesidedOps ops_;
};

class RawColumn final : public Column {
 public:
  RawColumn(std::string name, Phase phase, RawFabric* f) : Column(std::move(name), phase), ops_{f} {}
  void run(Row row, long n) override { run_row(ops_, row, n, model, checker); }
  std::array<std::int64_t, kCellsUsed> local_cells() const override {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    std::array<std::int64_t, kCellsUsed> v;
    for (int i = 0; i < kCellsUsed; ++i) v[i] = ops_.f->cells()[i];
    return v;
  }

 private:
  RawOps ops_;
};

// ---- measurement --------------------------------------------------------------

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// times[row][column]: microseconds per op, one per repetition.
using Times = std::vector<std::vector<std::vector<double>>>;

Times measure(Control& ctrl, std::vector<std::unique_ptr<Column>>& cols, const Options& opt) {
  using clock = std::chrono::steady_clock;
  Times times(kNumRows, std::vector<std::vector<double>>(cols.size()));
  const long warm = std::max(10L, opt.iters / 10);
  // rep -1 is a warm-up of everything (first touches, tcp connections).
  for (int rep = -1; rep < opt.reps; ++rep) {
    for (int r = 0; r < kNumRows; ++r) {
      for (std::size_t c = 0; c < cols.size(); ++c) {
        Column& col = *cols[c];
        set_phase(ctrl, col.phase());
        col.begin();
        col.run(kRows[r].row, warm);
        if (rep >= 0) {
          const auto t0 = clock::now();
          col.run(kRows[r].row, opt.iters);
          const auto t1 = clock::now();
          times[r][c].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() /
                                static_cast<double>(opt.iters));
        }
        col.end();
      }
    }
  }
  set_phase(ctrl, kIdle);
  return times;
}

std::string load_average() {
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    char buf[128] = {};
    const bool ok = std::fgets(buf, sizeof buf, f) != nullptr;
    std::fclose(f);
    if (ok) {
      std::string s(buf);
      // the three load averages
      std::size_t at = 0;
      for (int k = 0; k < 3 && at != std::string::npos; ++k) at = s.find(' ', at + 1);
      return s.substr(0, at);
    }
  }
  return "?";
}

std::string describe(const Window& w) {
  const auto info = w.info();
  std::string s = "provider " + w.provider() + ", fast path " + info.at("onesided_fast_path") +
                  ", atomics " + info.at("atomics");
  if (info.at("onesided_fast_path") != "on")
    s += " (int64: " + std::string(w.native_atomics(Dtype::Int64) ? "native" : "software") + ")";
  return s;
}

// Microseconds with the digits that mean something, down to the floor's.
std::string us(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 100 ? "%.1f" : v >= 10 ? "%.2f" : v >= 0.1 ? "%.3f" : "%.4f", v);
  return buf;
}

void print_table(const Times& times, const std::vector<std::unique_ptr<Column>>& cols, const Options& opt,
                 const std::vector<std::string>& notes, const std::string& load_before) {
  auto col_index = [&](const std::string& name) -> int {
    for (std::size_t c = 0; c < cols.size(); ++c)
      if (cols[c]->name() == name) return static_cast<int>(c);
    return -1;
  };
  struct Out {
    std::string head;
    int a, b;  // a value column (b < 0) or the ratio a / b
  };
  std::vector<Out> out;
  const int floor = col_index("CPU floor"), fast = col_index("fast path");
  const int os_shm = col_index("onesided shm"), raw_shm = col_index("raw shm");
  const int os_tcp = col_index("onesided tcp"), raw_tcp = col_index("raw tcp");
  out.push_back({"CPU floor", floor, -1});
  if (fast >= 0) {
    out.push_back({"fast path", fast, -1});
    out.push_back({"fast/floor", fast, floor});
    out.push_back({"onesided shm", os_shm, -1});
    out.push_back({"raw shm", raw_shm, -1});
    out.push_back({"shm ratio", os_shm, raw_shm});
  }
  if (os_tcp >= 0) {
    out.push_back({"onesided tcp", os_tcp, -1});
    out.push_back({"raw tcp", raw_tcp, -1});
    out.push_back({"tcp ratio", os_tcp, raw_tcp});
  }

  if (opt.hosts())
    std::printf("\nonesided C++ latency: 2 processes in network namespaces %s (origin) and %s (target),\n"
                "op + flush, 8-byte elements,\n", opt.netns[0].c_str(), opt.netns[1].c_str());
  else
    std::printf("\nonesided C++ latency: 2 processes on one host, op + flush, 8-byte elements,\n");
  std::printf("microseconds, median of %d x %ld after warm-up; ratios are onesided/peer\n", opt.reps, opt.iters);
  std::printf("command: %s\n", opt.command.c_str());
  std::printf("load average before: %s, after: %s; %ld CPUs online\n", load_before.c_str(),
              load_average().c_str(), ::sysconf(_SC_NPROCESSORS_ONLN));
  for (const auto& n : notes) std::printf("%s\n", n.c_str());
  std::printf("\n| %-26s |", "operation");
  for (const auto& o : out) std::printf(" %12s |", o.head.c_str());
  std::printf("\n|%s|", std::string(28, '-').c_str());
  for (std::size_t k = 0; k < out.size(); ++k) std::printf("%s:|", std::string(13, '-').c_str());
  std::printf("\n");
  for (int r = 0; r < kNumRows; ++r) {
    std::printf("| %-26s |", kRows[r].name);
    for (const auto& o : out) {
      const double a = median(times[r][o.a]);
      if (o.b < 0) std::printf(" %12s |", us(a).c_str());
      else std::printf(" %11.2fx |", a / median(times[r][o.b]));
    }
    std::printf("\n");
  }
  std::fflush(stdout);
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
  std::unique_ptr<Window> fast, shm, tcp;
  if (local) fast = Window::allocate(64, 8, fast_info, boot);
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
    cols.push_back(std::make_unique<OnesidedColumn>("onesided shm", shm.get()));
    cols.push_back(std::make_unique<RawColumn>("raw shm", kRawShm, raw_shm.get()));
  }
  if (tcp) {
    cols.push_back(std::make_unique<OnesidedColumn>("onesided tcp", tcp.get()));
    cols.push_back(std::make_unique<RawColumn>("raw tcp", kRawTcp, raw_tcp.get()));
  }

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
  if (fast) fast->free();
  tcp.reset();
  shm.reset();
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
