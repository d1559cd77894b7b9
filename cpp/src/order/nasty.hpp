// Nasty mode (after Nasty-MPI, Euro-Par 2016): the origin holds every RMA
// operation back until the latest point at which it must complete (Flush,
// Unlock, Fence, Complete, a Request's Wait/Test, Free), then issues the
// held operations one at a time, each complete before the next, in a random
// order that keeps only what onesided guarantees: accumulate-style ops from
// one thread to overlapping target bytes keep the orders accumulate_ordering
// requires; puts, gets and everything else may land in any order.
//
// A program that is correctly synchronised behaves the same; one that reads
// a result before its completion, reuses an origin buffer too early, or
// relies on an order it did not ask for, shows it.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "order/order_tracker.hpp"

namespace onesided::detail {

struct HeldOp {
  int target = 0;
  std::thread::id thread;
  bool accumulate = false;  // accumulate-style: `access` describes it
  Access access;
  std::function<void()> post;  // issues the operation
};

class NastyQueue {
 public:
  // `rank` is mixed into the seed so ranks of one job shuffle differently.
  NastyQueue(std::uint64_t seed, int rank)
      : seed_(seed), rng_(seed + static_cast<std::uint64_t>(rank) * 0x9e3779b97f4a7c15ull) {}

  // The seed from the info value ("true"/"false"/"1"/"0"/"on"/"off"/an
  // integer seed) or, when the key is absent, ONESIDED_NASTY; nullopt: off.
  static std::optional<std::uint64_t> seed_from(const std::string* info_value);

  std::uint64_t seed() const { return seed_; }
  void hold(HeldOp op);
  // Removes the held ops to `target` (every target when target < 0) and
  // returns them in a random order that keeps `rule`'s required orders
  // among each thread's accumulate-style ops.
  std::vector<HeldOp> release(int target, const OrderRule& rule);
  bool empty();

 private:
  std::uint64_t seed_;
  std::mutex mutex_;
  std::mt19937_64 rng_;
  std::vector<HeldOp> held_;
};

}  // namespace onesided::detail
