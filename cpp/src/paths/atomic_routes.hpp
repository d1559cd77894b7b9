// The two routes of accumulate-style ops on the provider path; which one a
// dtype takes is decided once, at creation (atomic_plan.hpp).
#pragma once

#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "atomics/kernels.hpp"
#include "paths/in_flight_ops.hpp"
#include "paths/piece_runs.hpp"

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

  // A call of at most one operand whose layouts pair as one nest of short
  // chunks (runs_suit): its pieces as AtomicRuns messages, many pieces
  // each, the old values placed into the result's pieces on the reply
  // (software_atomic_runs.cpp).
  static bool runs_suit(const Transport& t, const AtomicCall& bases, const Nest<3>& nest);
  void apply_nest(const Where& w, const AtomicCall& bases, const Nest<3>& nest, const RequestPtr& request);

  // Target side: an Atomic request from an origin. `local` finds the bytes
  // of a checked range of this rank's window (null: outside it).
  template <class Local>
  void serve(const Header& h, const std::byte* payload, std::size_t len, Local&& local);
  // Target side: an AtomicRuns request; `local` as for serve().
  template <class Local>
  void serve_runs(const Header& h, const std::byte* payload, std::size_t len, Local&& local);
  // Origin side: the target's AtomicDone.
  static void on_reply(const Header& h, const std::byte* payload, std::size_t len);

 private:
  void serve_at(const Header& h, const std::byte* payload, std::size_t len, std::byte* target);
  // The reply to `h`: the old values (`old`, when fetching), or `error`.
  void answer(const Header& h, std::span<const std::byte> old, const std::string& error);
  // Applies a checked AtomicRuns message's pieces (operands from `data`,
  // old values to `old`) under atomic_mutex_ as apply_locked() holds it.
  template <class Runs>
  void apply_runs(Op op, Dtype dtype, const Runs& runs, const std::byte* data, std::byte* old);
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

// The message: Header (offset: the Where's `at`; count: runs), then
// `count` PieceRuns (piece_runs.hpp), then the operand of every piece in
// order (none for NO_OP). Each piece holds whole elements.
template <class Local>
void SoftwareAtomics::serve_runs(const Header& h, const std::byte* payload, std::size_t len, Local&& local) {
  const bool known = static_cast<std::size_t>(h.op) < kNumOps && static_cast<std::size_t>(h.dtype) < kNumDtypes;
  const int operands = known ? op_info(h.op).operands : 0;
  if (!known || operands > 1 || !op_applies(h.op, h.dtype)) return answer(h, {}, "malformed atomic request");
  const std::size_t head = std::size_t{h.count} * sizeof(PieceRun);
  // With an operand the pieces' bytes are in the message; without, the
  // reply must hold them (a fetching NO_OP).
  const std::size_t max_data = operands ? (len >= head ? len - head : 0)
                                        : s_.endpoint->transport().max_message_size() - sizeof(Header);
  const CheckedRuns runs(h, payload, len, max_data, local);
  if (runs.error()) return answer(h, {}, runs.error());
  const std::size_t esize = dtype_info(h.dtype).size;
  if (!runs.each([&](std::byte*, std::size_t bytes) { return bytes % esize == 0; }))
    return answer(h, {}, "malformed atomic request");
  const bool fetch = h.flags & kFetch;
  std::vector<std::byte> old(fetch ? runs.data() : 0);
  apply_runs(h.op, h.dtype, runs, operands ? payload + head : nullptr, fetch ? old.data() : nullptr);
  answer(h, old, {});
}

template <class Runs>
void SoftwareAtomics::apply_runs(Op op, Dtype dtype, const Runs& runs, const std::byte* data, std::byte* old) {
  // Granularity 0: one hold for the whole message, as for an Atomic
  // message; else apply_locked's units within each piece.
  std::unique_lock whole(atomic_mutex_, std::defer_lock);
  if (s_.accumulate_granularity == 0) whole.lock();
  const std::size_t esize = dtype_info(dtype).size;
  runs.each([&](std::byte* at, std::size_t bytes) {
    if (whole.owns_lock())
      kernels::apply(op, dtype, at, data, nullptr, old, bytes / esize);
    else
      apply_locked(op, dtype, at, data, nullptr, old, bytes / esize);
    if (data) data += bytes;
    if (old) old += bytes;
    return true;
  });
}

}  // namespace onesided::detail
