// Notified RMA at the target: a window's notification counters at this rank
// (info onesided_notifications; none by default, which costs nothing).
//
// Where they live is decided once, at creation: in the shared mapping on
// the shared-memory path (origins add to them with CPU atomics, right after
// their data: shared_memory_path.cpp), else in this process, where the
// progress engine adds to them when a Notify message arrives
// (in_flight_ops.hpp sends it once the operations it covers are complete
// here).
//
// Who writes what: origins add with release (through shared memory, or
// this process's progress thread on their behalf); this rank reads with
// acquire, so whatever it reads after seeing a count includes the data of
// the operations that count stands for; set() is an exchange, so no
// increment is lost to a reset.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "onesided/error.hpp"

namespace onesided::detail {

class NotifyCounters {
 public:
  NotifyCounters() = default;
  // `n` counters in this process.
  static NotifyCounters owned(std::size_t n) {
    NotifyCounters c;
    c.owned_.reset(new std::atomic<std::uint64_t>[n]());
    c.words_ = c.owned_.get();
    c.n_ = n;
    return c;
  }
  // `n` counters at `words`, in memory the window's ranks share (zeroed).
  static NotifyCounters at(std::atomic<std::uint64_t>* words, std::size_t n) {
    NotifyCounters c;
    c.words_ = words;
    c.n_ = n;
    return c;
  }

  std::size_t size() const { return n_; }

  // The index of a call, checked (an Argument error naming the rule).
  std::size_t check(std::uint64_t index) const {
    if (n_ == 0)
      raise(ErrorCategory::Argument,
            "notification_idx " + std::to_string(index) +
                ": the window has no notification counters (create it with info onesided_notifications=N)");
    if (index >= n_)
      raise(ErrorCategory::Argument, "notification_idx " + std::to_string(index) + " is outside the window's " +
                                         std::to_string(n_) + " notification counters (0 to " +
                                         std::to_string(n_ - 1) + ")");
    return static_cast<std::size_t>(index);
  }

  std::uint64_t value(std::size_t i) const { return words_[i].load(std::memory_order_acquire); }
  bool reached(std::size_t i, std::uint64_t v) const { return value(i) >= v; }
  std::uint64_t set(std::size_t i, std::uint64_t v) { return words_[i].exchange(v, std::memory_order_acq_rel); }
  // A Notify message: an index out of range (a malformed message) is dropped.
  void add(std::uint64_t i) {
    if (i < n_) words_[i].fetch_add(1, std::memory_order_release);
  }

 private:
  std::unique_ptr<std::atomic<std::uint64_t>[]> owned_;
  std::atomic<std::uint64_t>* words_ = nullptr;
  std::size_t n_ = 0;
};

}  // namespace onesided::detail
