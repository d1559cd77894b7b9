// The origin's epoch bookkeeping (epoch.hpp's rules) and what each open
// epoch remembers, under one mutex: any thread may open, use or close
// epochs, so every member here is read and written under `mutex`.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "window/epoch.hpp"

namespace onesided::detail {

struct Epochs {
  explicit Epochs(int nranks)
      : state(nranks),
        nocheck(static_cast<std::size_t>(nranks), 0),
        exclusive(static_cast<std::size_t>(nranks), 0),
        post_matched(static_cast<std::size_t>(nranks), 0) {}

  static constexpr std::uint8_t kCompleted = 2;
  std::mutex mutex;
  EpochState state;
  // Per target (bytes, not vector<bool>, so threads locking different
  // targets touch different memory): locked with MODE_NOCHECK; held exclusively.
  std::vector<std::uint8_t> nocheck, exclusive;
  bool lock_all_nocheck = false;
  // The open access epoch (Start) has matched that target's Post (1), or
  // has also sent it Complete (kCompleted: an interrupted Complete resumes).
  std::vector<std::uint8_t> post_matched;
};

}  // namespace onesided::detail
