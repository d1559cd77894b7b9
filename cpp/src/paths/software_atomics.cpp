// Software atomics: the accumulate-style ops of dtypes the provider cannot
// do natively (or every dtype, with onesided_atomics=software) are applied
// by the target itself, in its progress engine.
//
// Invariants:
//  - Memory touched: the target's window memory (or an attached region),
//    by the target's progress thread or, for this rank's own window, by
//    the calling thread; always under the target's atomic_mutex_, so every
//    software atomic on a window is atomic with every other, per element.
//    No native atomic touches a software dtype's memory (atomic_plan.hpp).
//  - Lock span: with mpi_accumulate_granularity 0 (the default) one hold of
//    atomic_mutex_ covers a whole message (a whole local call); with G > 0
//    one hold covers ceil(G / element size) elements, so a large op from
//    one origin lets others (the target's own threads, the next message)
//    in between units. An element is never split across holds, whatever G.
//  - Order: messages from one origin to one target are delivered and
//    applied in send order (transport.hpp), so every accumulate_ordering
//    pair is kept; large vectors travel in several messages, in order.
//  - Completion: an op is complete when the target's AtomicDone for its
//    last message has arrived (carrying the old values when fetching).
//  - The target checks every request again (dtype, op, bounds): a
//    malformed message is answered with a failure, never applied.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "atomics/kernels.hpp"
#include "paths/atomic_routes.hpp"

namespace onesided::detail {
void SoftwareAtomics::apply(const Where& w, const AtomicCall& c, const Access& a, const RequestPtr& request) {
  if (order_) order_->wait_for_earlier(w.target, a);
  if (w.local)
    return apply_locked(c.op, c.dtype, w.local, static_cast<const std::byte*>(c.origin),
                        static_cast<const std::byte*>(c.origin2), static_cast<std::byte*>(c.result), c.count);
  const int operands = op_info(c.op).operands;
  const std::size_t esize = dtype_info(c.dtype).size;
  const std::size_t per_elem = esize * static_cast<std::size_t>(std::max(operands, 1));
  const std::size_t room = s_.endpoint->transport().max_message_size() - sizeof(Header);
  const std::size_t chunk = std::max<std::size_t>(1, room / per_elem);
  std::vector<std::byte> payload;
  for (std::size_t first = 0; first < c.count; first += chunk) {
    const std::size_t n = std::min(chunk, c.count - first);
    const std::size_t nbytes = n * esize;
    // In flight until the reply, whose old values go to `result`.
    InFlightOps::Op* pending = ops_.begin(w.target, request);
    pending->result = c.result ? static_cast<std::byte*>(c.result) + first * esize : nullptr;
    pending->bytes = nbytes;
    if (order_) order_->record(w.target, pending->token, a);
    Header h = s_.header(MsgKind::Atomic, w.target, reinterpret_cast<std::uint64_t>(pending),
                         c.result ? kFetch : 0);
    h.op = c.op;
    h.dtype = c.dtype;
    h.count = static_cast<std::uint32_t>(n);
    h.offset = w.at + first * esize;
    payload.resize(nbytes * static_cast<std::size_t>(operands));
    if (operands >= 1) std::memcpy(payload.data(), static_cast<const std::byte*>(c.origin) + first * esize, nbytes);
    if (operands >= 2)
      std::memcpy(payload.data() + nbytes, static_cast<const std::byte*>(c.origin2) + first * esize, nbytes);
    InFlightOps::submit(pending, [&](InFlightOps::Op*) { s_.send(w.target, h, payload.data(), payload.size()); });
  }
}

void SoftwareAtomics::serve_at(const Header& h, const std::byte* payload, std::size_t len, std::byte* target) {
  const bool known = static_cast<std::size_t>(h.op) < kNumOps && static_cast<std::size_t>(h.dtype) < kNumDtypes;
  const std::size_t bytes = known ? std::size_t{h.count} * dtype_info(h.dtype).size : 0;
  const int operands = known ? op_info(h.op).operands : 0;
  const bool fetch = h.flags & kFetch;
  // The origin checked all of this; checking again keeps a corrupted or
  // malicious message from writing outside the window.
  std::string error;
  if (!known || len < bytes * static_cast<std::size_t>(operands) || !op_applies(h.op, h.dtype))
    error = "malformed atomic request";
  else if (!target)
    error = "target range outside the window (checked at the target)";
  if (!error.empty()) return answer(h, {}, error);
  std::vector<std::byte> old(fetch ? bytes : 0);
  apply_locked(h.op, h.dtype, target, operands >= 1 ? payload : nullptr, operands >= 2 ? payload + bytes : nullptr,
               fetch ? old.data() : nullptr, h.count);
  answer(h, old, {});
}

void SoftwareAtomics::answer(const Header& h, std::span<const std::byte> old, const std::string& error) {
  const int origin = static_cast<int>(h.origin);
  if (!error.empty())
    return s_.send(origin, s_.header(MsgKind::AtomicDone, origin, h.token, kFailed), error.data(), error.size());
  s_.send(origin, s_.header(MsgKind::AtomicDone, origin, h.token), old.data(), old.size());
}

void SoftwareAtomics::apply_locked(Op op, Dtype dtype, std::byte* target, const std::byte* origin,
                                   const std::byte* origin2, std::byte* result, std::size_t count) {
  const std::size_t esize = dtype_info(dtype).size;
  const std::uint64_t g = s_.accumulate_granularity;
  // MPI 4.1: a granularity that is not a multiple of the element size
  // counts as the next multiple (and never less than one element).
  const std::uint64_t per_hold = g == 0 ? count : std::max<std::uint64_t>(1, g / esize + (g % esize != 0));
  for (std::size_t first = 0; first < count;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(per_hold, count - first));
    const std::size_t at = first * esize;
    {
      std::lock_guard lk(atomic_mutex_);
      kernels::apply(op, dtype, target + at, origin ? origin + at : nullptr, origin2 ? origin2 + at : nullptr,
                     result ? result + at : nullptr, n);
    }
    first += n;
  }
}

void SoftwareAtomics::on_reply(const Header& h, const std::byte* payload, std::size_t len) {
  auto* p = reinterpret_cast<InFlightOps::Op*>(h.token);
  const bool failed = h.flags & kFailed;
  const std::string reason(reinterpret_cast<const char*>(payload), failed ? len : 0);
  if (failed) return p->complete(reason.c_str());
  if (p->gathered) {
    // A strided result's pieces: the target answered each piece's old
    // values in order; a reply of any other size is refused, not placed.
    const auto* plan = static_cast<const GatherPlan*>(p->result);
    if (len != plan->bytes) return p->complete("software atomic: the reply's size is not the pieces'");
    plan->place(payload);
  } else if (p->result) {
    std::memcpy(p->result, payload, std::min(len, p->bytes));
  }
  p->complete(nullptr);
}

}  // namespace onesided::detail
