// The two routes of accumulate-style ops on the provider path; which one a
// dtype takes is decided once, at creation (atomic_plan.hpp).
#pragma once

#include <mutex>

#include "paths/in_flight_ops.hpp"

namespace onesided::detail {

// The provider's native atomics, for every rank including this one: a
// local update by the CPU would not be atomic with the provider's.
class NativeAtomics final : public AtomicRoute {
 public:
  NativeAtomics(WindowState& s, InFlightOps& ops, OrderKeeper* order) : s_(s), ops_(ops), order_(order) {}
  void apply(const Where& w, const AtomicCall& call, const Access& a, const RequestPtr& request) override;
  // A fetching call whose layouts pair as one nest (DataPath::accumulate_nest):
  // its chunks, cut at the plan's chunk size, in groups of at most the
  // provider's atomic stretch limit and chunk size, each group one vectored
  // atomic with one completion.
  void apply_nest(const Where& w, const AtomicCall& bases, const Nest<3>& nest, const RequestPtr& request);

 private:
  struct Group;
  void post(const Where& w, const AtomicCall& bases, Group& g, const RequestPtr& request);
  WindowState& s_;
  InFlightOps& ops_;
  OrderKeeper* order_;  // null: the provider keeps every required order
};

// onesided's software atomics: the target's progress engine applies the op
// (kernels.cpp) under the window's atomic mutex (per granularity unit) and
// replies.
class SoftwareAtomics final : public AtomicRoute {
 public:
  SoftwareAtomics(WindowState& s, InFlightOps& ops, OrderKeeper* order) : s_(s), ops_(ops), order_(order) {}
  void apply(const Where& w, const AtomicCall& call, const Access& a, const RequestPtr& request) override;

  // Target side: an Atomic request from an origin. `local` finds the bytes
  // of a checked range of this rank's window (null: outside it).
  template <class Local>
  void serve(const Header& h, const std::byte* payload, std::size_t len, Local&& local);
  // Origin side: the target's AtomicDone.
  static void on_reply(const Header& h, const std::byte* payload, std::size_t len);

 private:
  void serve_at(const Header& h, const std::byte* payload, std::size_t len, std::byte* target);
  // kernels::apply under atomic_mutex_, held once per unit of the window's
  // mpi_accumulate_granularity (whole elements), or once for all `count`.
  void apply_locked(Op op, Dtype dtype, std::byte* target, const std::byte* origin, const std::byte* origin2,
                    std::byte* result, std::size_t count);
  WindowState& s_;
  InFlightOps& ops_;
  OrderKeeper* order_;
  std::mutex atomic_mutex_;  // serialises every software atomic on this rank's window
};

template <class Local>
void SoftwareAtomics::serve(const Header& h, const std::byte* payload, std::size_t len, Local&& local) {
  const bool known = static_cast<std::size_t>(h.op) < kNumOps && static_cast<std::size_t>(h.dtype) < kNumDtypes;
  const std::size_t bytes = known ? std::size_t{h.count} * dtype_info(h.dtype).size : 0;
  serve_at(h, payload, len, known ? local(h.offset, bytes) : nullptr);
}

}  // namespace onesided::detail
