// The benchmark's command line (see bench_main.cpp for what each option does).
#pragma once

#include <array>
#include <string>

namespace onesided_bench {

struct Options {
  long iters = 10000;
  int reps = 5;
  bool tcp = true;
  std::array<std::string, 2> netns;  // empty: both ranks stay in this namespace
  std::string command;
  bool hosts() const { return !netns[0].empty(); }
};

// Exits with a usage line on anything it does not know.
Options parse(int argc, char** argv);

}  // namespace onesided_bench
