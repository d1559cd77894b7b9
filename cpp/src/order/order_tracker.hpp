// accumulate_ordering where the transport does not keep it by itself.
//
// Accumulate-style ops from one origin to overlapping bytes of one target
// must take effect in issue order for each pair type the window requires
// (rar, raw, war, waw). The software path keeps every order: its messages
// are delivered and applied in send order. Native atomics keep a pair type
// only when the provider says so (FI_ORDER_ATOMIC_*) for ops of that size
// (max_order_*_size). Where neither holds, the later op waits until the
// earlier one has completed at the target; only for overlapping ranges, so
// unrelated ops still pipeline.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/provider_atomics.hpp"
#include "order/ordering.hpp"

namespace onesided::detail {

// How an accumulate-style op reaches the target memory.
enum class Channel : std::uint8_t { Native, Messages };

// What one accumulate-style op (or one native chunk of it) touches.
struct Access {
  std::uint64_t lo = 0, hi = 0;  // byte range [lo, hi) in the target's address space
  bool reads = false;            // returns the old values (fetching ops)
  bool writes = false;           // changes the target (every op but NO_OP)
  Channel channel = Channel::Native;
  std::uint64_t bytes() const { return hi - lo; }
};

class OrderRule {
 public:
  OrderRule() = default;
  OrderRule(const Ordering& required, const AtomicOrder& provided)
      : required_(required), provided_(provided) {}

  // True when the window's accumulate_ordering requires `later`, issued
  // after `earlier` by the same origin thread, to take effect after it.
  bool requires_order(const Access& earlier, const Access& later) const;
  // True when, in addition, the transport would not keep that order by
  // itself: `later` may only be posted once `earlier` has completed.
  bool must_wait(const Access& earlier, const Access& later) const;
  // True when no pair of native ops could ever need a wait (every required
  // order kept by the provider, for any size).
  bool native_always_ordered() const;
  // For Get_info: which orders the provider keeps and which onesided enforces.
  std::string describe(bool any_native, bool any_software) const;

 private:
  bool kept(char pair, std::uint64_t bytes) const;
  Ordering required_;
  AtomicOrder provided_;
};

class OrderTracker {
 public:
  using Token = std::uint64_t;
  explicit OrderTracker(int targets) : slots_(new Slot[static_cast<std::size_t>(targets)]) {}

  // The earlier ops to `target` that `a` must wait for. Drops the records
  // of ops for which `pending(token)` is false (they have completed).
  template <class Pending>
  std::vector<Token> before(const OrderRule& rule, int target, const Access& a, Pending&& pending) {
    Slot& s = slots_[target];
    std::lock_guard lk(s.mutex);
    std::vector<Token> out;
    std::size_t keep = 0;
    for (auto& e : s.entries) {
      if (!pending(e.token)) continue;
      if (rule.must_wait(e.access, a)) out.push_back(e.token);
      s.entries[keep++] = e;
    }
    s.entries.resize(keep);
    return out;
  }
  void record(int target, Token token, const Access& a) {
    Slot& s = slots_[target];
    std::lock_guard lk(s.mutex);
    s.entries.push_back({token, a});
  }

 private:
  struct Entry {
    Token token;
    Access access;
  };
  struct Slot {
    std::mutex mutex;
    std::vector<Entry> entries;
  };
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace onesided::detail
