// Which path each dtype's accumulate-style ops take on a window: native
// (the provider's atomics) or software (onesided's kernels: at the target,
// or by the caller on a cross-memory window).
//
// The rule: a dtype goes native only when every declared op that applies to
// it is native, in the shape its function needs, at every rank. Otherwise
// every op of that dtype runs in software. Orders the provider does not keep
// do not push a dtype to software: onesided keeps them by waiting for
// overlapping earlier ops (order_tracker.hpp). Hardware and software atomics
// therefore never act on the same memory (they are not atomic with each
// other: ompi#4688, pmodels/mpich#2226, ofiwg/libfabric#4310).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "onesided/types.hpp"
#include "atomics/op_set.hpp"
#include "transport/transport.hpp"

namespace onesided::detail {

// Native support as probed: the largest element count per (kind, op, dtype),
// 0 where the provider has no native form.
class NativeTable {
 public:
  static NativeTable probe(Transport& transport);
  std::uint32_t count(AtomicKind k, Op op, Dtype d) const { return counts_[index(k, op, d)]; }
  void set(AtomicKind k, Op op, Dtype d, std::uint32_t count) { counts_[index(k, op, d)] = count; }
  // What every rank supports: the elementwise minimum.
  void meet(const NativeTable& other);
  std::string bytes() const;
  static NativeTable from_bytes(std::string_view bytes);
  bool operator==(const NativeTable&) const = default;

 private:
  static std::size_t index(AtomicKind k, Op op, Dtype d) {
    return (static_cast<std::size_t>(k) * kNumOps + static_cast<std::size_t>(op)) * kNumDtypes +
           static_cast<std::size_t>(d);
  }
  std::array<std::uint32_t, kNumAtomicKinds * kNumOps * kNumDtypes> counts_{};
};

struct AtomicPath {
  bool native = false;
  std::string reason;
};

class AtomicPlan {
 public:
  AtomicPlan() = default;
  // `unavailable`: empty, or why the provider has no native atomics at all.
  AtomicPlan(const OpSet& declared, const NativeTable& local, const NativeTable& everywhere,
             const std::string& provider, const std::string& unavailable);

  // The shared-memory path: CPU atomics on shared memory for every op;
  // `lock_free(d)` says whether dtype d is lock-free or takes stripe locks.
  template <class LockFree>
  static AtomicPlan cpu(LockFree&& lock_free) {
    AtomicPlan p;
    for (const auto& d : kDtypes)
      p.paths_[static_cast<std::size_t>(d.id)] =
          lock_free(d.id) ? AtomicPath{true, "shared-memory path: lock-free CPU atomics on shared memory"}
                          : AtomicPath{false, "shared-memory path: CPU stripe locks on shared memory (no "
                                              "lock-free atomic of this size)"};
    return p;
  }

  // Every dtype on one path that is not the provider's: `reason` says
  // which (the cross-memory atomics, paths/cross_memory_atomics.hpp).
  static AtomicPlan uniform(const std::string& reason) {
    AtomicPlan p;
    for (const auto& d : kDtypes) p.paths_[static_cast<std::size_t>(d.id)] = AtomicPath{false, reason};
    return p;
  }

  const AtomicPath& path(Dtype d) const { return paths_[static_cast<std::size_t>(d)]; }
  // Elements per native atomic for this call at every rank (0: none).
  std::size_t native_count(Function f, Op op, Dtype d) const {
    return everywhere_.count(kind_of(f, op), native_op(op), d);
  }
  // Elements per native atomic for this call (at least 1).
  std::size_t chunk(Function f, Op op, Dtype d) const { return std::max<std::size_t>(1, native_count(f, op, d)); }

  // The native shape of a function's op, and the op the provider runs.
  static AtomicKind kind_of(Function f, Op op);
  static Op native_op(Op op) { return op == Op::Inc ? Op::Sum : op; }

 private:
  void decide(const OpSet& declared, const NativeTable& local, const NativeTable& everywhere,
              const std::string& provider, const std::string& unavailable);
  std::array<AtomicPath, kNumDtypes> paths_;
  NativeTable everywhere_;
};

}  // namespace onesided::detail
