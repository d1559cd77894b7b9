// The benchmark's command line (see bench_main.cpp for what each option does).
#pragma once

#include <array>
#include <string>
#include <vector>

namespace onesided_bench {

struct Options {
  long iters = 10000;
  int reps = 5;
  bool tcp = true;
  std::array<std::string, 2> netns;  // empty: both ranks stay in this namespace
  // Empty: every row, every column. Otherwise only the rows whose name
  // starts with one of these words ("put", "fetch_and_op") and the columns
  // named here ("onesided shm"), so a profile sees one kind of work.
  std::vector<std::string> rows, columns;
  std::string command;
  bool hosts() const { return !netns[0].empty(); }
  bool wants_row(const char* name) const;
  bool wants_column(const std::string& name) const;
};

// Exits with a usage line on anything it does not know.
Options parse(int argc, char** argv);

}  // namespace onesided_bench
