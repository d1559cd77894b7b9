#include "options.hpp"

#include <cstdio>
#include <algorithm>
#include <cstdlib>

namespace onesided_bench {
namespace {

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s [--iters N] [--reps R] [--quick] [--no-tcp] [--netns ORIGIN,TARGET]\n"
               "       [--rows WORD,...] [--columns NAME,...]\n", argv0);
  std::exit(2);
}

std::vector<std::string> split(const std::string& v) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at <= v.size();) {
    const std::size_t comma = std::min(v.find(',', at), v.size());
    if (comma > at) out.push_back(v.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

}  // namespace

bool Options::wants_row(const char* name) const {
  if (rows.empty()) return true;
  const std::string n(name);
  for (const auto& w : rows)
    if (n.compare(0, w.size(), w) == 0 && (n.size() == w.size() || n[w.size()] == ' ')) return true;
  return false;
}

bool Options::wants_column(const std::string& name) const {
  if (columns.empty()) return true;
  for (const auto& c : columns)
    if (c == name) return true;
  return false;
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
    else if (a == "--rows" && i + 1 < argc) o.rows = split(argv[++i]);
    else if (a == "--columns" && i + 1 < argc) o.columns = split(argv[++i]);
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

}  // namespace onesided_bench
