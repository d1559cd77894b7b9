// The measurement: every row, column by column, repetition by repetition,
// so that a noisy moment hits every column of a row alike.
#pragma once

#include <memory>
#include <vector>

#include "columns.hpp"
#include "control.hpp"
#include "options.hpp"

namespace onesided_bench {

double median(std::vector<double> v);

// times[row][column]: microseconds per op, one per repetition.
using Times = std::vector<std::vector<std::vector<double>>>;

Times measure(Control& ctrl, std::vector<std::unique_ptr<Column>>& cols, const Options& opt);

}  // namespace onesided_bench
