#include "measure.hpp"

#include <algorithm>
#include <chrono>

namespace onesided_bench {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

Times measure(Control& ctrl, std::vector<std::unique_ptr<Column>>& cols, const Options& opt) {
  using clock = std::chrono::steady_clock;
  Times times(kNumRows, std::vector<std::vector<double>>(cols.size()));
  const long warm = std::max(10L, opt.iters / 10);
  // rep -1 is a warm-up of everything (first touches, tcp connections).
  for (int rep = -1; rep < opt.reps; ++rep) {
    for (int r = 0; r < kNumRows; ++r) {
      if (!opt.wants_row(kRows[r].name)) continue;
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

}  // namespace onesided_bench
