#include "report.hpp"

#include <unistd.h>

#include <cstdio>

namespace onesided_bench {
namespace {

// Microseconds with the digits that mean something, down to the floor's.
std::string us(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 100 ? "%.1f" : v >= 10 ? "%.2f" : v >= 0.1 ? "%.3f" : "%.4f", v);
  return buf;
}

}  // namespace

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
  const int floor = col_index("CPU floor"), fast = col_index("fast path"), epoch = col_index("epoch");
  const int os_shm = col_index("onesided shm"), raw_shm = col_index("raw shm");
  const int os_tcp = col_index("onesided tcp"), raw_tcp = col_index("raw tcp");
  // A column left out (--columns) leaves out what is computed from it.
  auto add = [&](const char* head, int a, int b) {
    if (a >= 0) out.push_back({head, a, b});
  };
  add("CPU floor", floor, -1);
  add("fast path", fast, -1);
  if (floor >= 0) add("fast/floor", fast, floor);
  add("epoch", epoch, -1);
  if (floor >= 0) add("epoch/floor", epoch, floor);
  add("onesided shm", os_shm, -1);
  add("raw shm", raw_shm, -1);
  if (raw_shm >= 0) add("shm ratio", os_shm, raw_shm);
  add("onesided tcp", os_tcp, -1);
  add("raw tcp", raw_tcp, -1);
  if (raw_tcp >= 0) add("tcp ratio", os_tcp, raw_tcp);

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
    if (!opt.wants_row(kRows[r].name)) continue;
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

}  // namespace onesided_bench
