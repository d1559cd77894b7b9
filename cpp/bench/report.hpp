// The printed table: a note per window, the load average and the median of
// each row and column, with the onesided/peer ratios.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "columns.hpp"
#include "measure.hpp"
#include "options.hpp"

namespace onesided_bench {

// The three load averages from /proc/loadavg ("?" if unreadable).
std::string load_average();

// A window's provider, path and atomics, for the notes above the table.
std::string describe(const Window& w);

void print_table(const Times& times, const std::vector<std::unique_ptr<Column>>& cols, const Options& opt,
                 const std::vector<std::string>& notes, const std::string& load_before);

}  // namespace onesided_bench
