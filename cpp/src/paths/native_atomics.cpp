// Native atomics on the provider path.
//
// Invariants:
//  - Memory touched: the target's registered window memory, only through
//    the provider's fi_fetch_atomic / fi_compare_atomic, or for a strided
//    call fi_fetch_atomicmsg over several stretches (transport.hpp), for
//    every target including this rank; the origin's operand, result and the
//    scratch below (the operation's own, or one shared by its chunks or by
//    a vectored group) until completion.
//  - Locks: none here; the provider applies each element atomically, and
//    no other path acts on a native dtype's memory (atomic_plan.hpp).
//  - Order: the provider's, where it keeps the required accumulate_ordering
//    pair for the op's size; elsewhere OrderKeeper delays a later op until
//    the earlier overlapping one has completed.
//  - Completion: always the fetching forms, since a fetch completes only
//    once the target applied the op, which flush() needs; an op is complete
//    when its last chunk's completion arrives.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "paths/atomic_routes.hpp"

namespace onesided::detail {
namespace {

// The value 1 of every dtype, as bytes (INC's native form adds ones).
struct Ones {
  std::array<std::array<std::byte, 32>, kNumDtypes> bytes{};
  Ones() {
    for (const auto& d : kDtypes)
      visit_dtype(d.id, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (!requires { tag.index; }) {  // pairs have no INC (op_applies)
          const T one(1);
          std::memcpy(bytes[static_cast<std::size_t>(d.id)].data(), &one, sizeof one);
        }
      });
  }
  const std::byte* at(Dtype d) const { return bytes[static_cast<std::size_t>(d)].data(); }
};
const Ones kOne;

}  // namespace

void NativeAtomics::apply(const Where& w, const AtomicCall& c, const Access& a, const RequestPtr& request) {
  const auto kind = AtomicPlan::kind_of(c.function, c.op);
  const Op nop = AtomicPlan::native_op(c.op);
  const std::size_t esize = dtype_info(c.dtype).size;
  const std::size_t chunk = s_.plan.chunk(c.function, c.op, c.dtype);
  const std::size_t count = c.count;
  const void* origin = c.origin;
  void* result = c.result;
  // Memory the provider uses until completion: INC's ones (INC is SUM with
  // ones) and the scratch an accumulate fetches into. A call in one chunk
  // that fits uses its operation's own scratch (no allocation); otherwise
  // the chunks share one buffer, kept until the last of them completes.
  const std::size_t bytes = count * esize;
  const bool inc = c.op == Op::Inc, scratch = result == nullptr;
  const std::size_t room_bytes = (inc + scratch) * bytes;
  const bool inline_room = count <= chunk && room_bytes <= InFlightOps::Op::kScratch;
  std::shared_ptr<std::byte[]> shared;
  if (room_bytes && !inline_room) shared = std::make_shared_for_overwrite<std::byte[]>(room_bytes);
  auto fill = [&](std::byte* room) {
    if (inc) {
      for (std::size_t i = 0; i < count; ++i) std::memcpy(room + i * esize, kOne.at(c.dtype), esize);
      origin = room;
    }
    if (scratch) result = room + (inc ? bytes : 0);
  };
  if (shared) fill(shared.get());
  auto at = [&](const void* p, std::size_t first) {
    return p ? static_cast<const std::byte*>(p) + first * esize : nullptr;
  };
  const Peer& p = s_.peers[w.target];
  for (std::size_t first = 0; first < count; first += chunk) {
    const std::size_t n = std::min(chunk, count - first);
    Access part = a;
    part.lo = a.lo + first * esize;
    part.hi = part.lo + n * esize;
    if (order_) order_->wait_for_earlier(w.target, part);
    InFlightOps::Op* done = ops_.begin(w.target, request);
    if (room_bytes && inline_room) fill(done->scratch.data());  // the only chunk
    done->keep = shared;
    // libfabric's compare form takes (buf = value swapped in, compare =
    // comperand or mask); ours is (origin = comperand, origin2 = swap).
    const bool compare = kind == AtomicKind::Compare;
    const void* buf = compare ? at(c.origin2, first) : at(origin, first);
    const void* cmp = compare ? at(origin, first) : nullptr;
    void* res = static_cast<std::byte*>(result) + first * esize;
    if (order_) order_->record(w.target, done->token, part);
    InFlightOps::submit(done, [&](InFlightOps::Op* d) {
      s_.endpoint->transport().atomic(p.addr, kind, nop, c.dtype, buf, cmp, res, n, w.region,
                                      w.offset + first * esize, d);
    });
    s_.ring(w.target);
  }
}

// The chunks of one vectored atomic, gathered before it is posted.
struct NativeAtomics::Group {
  std::vector<Transport::AtomicStretch> stretches;
  std::size_t elements = 0;
  std::uint64_t lo = UINT64_MAX, hi = 0;  // the target bytes it spans, for the order keeper
};

void NativeAtomics::apply_nest(const Where& w, const AtomicCall& bases, const Nest<3>& nest,
                               const RequestPtr& request) {
  const std::size_t esize = dtype_info(bases.dtype).size;
  const std::size_t chunk = s_.plan.chunk(bases.function, bases.op, bases.dtype);
  const std::size_t limit = s_.endpoint->transport().max_atomic_stretches();
  const auto* origin = static_cast<const std::byte*>(bases.origin);
  auto* result = static_cast<std::byte*>(bases.result);
  Group g;
  nest.for_each_chunk([&](const std::array<std::int64_t, 3>& at, std::uint64_t bytes) {
    for (std::uint64_t done = 0; done < bytes;) {
      const std::size_t n = std::min<std::uint64_t>(chunk, (bytes - done) / esize);
      if (n == 0) break;  // chunks hold whole elements; never loop on a remainder
      if (g.stretches.size() == limit || g.elements + n > chunk) post(w, bases, g, request);
      const std::uint64_t target = static_cast<std::uint64_t>(at[2]) + done;
      // Null origin (NoOp, or INC's ones) and null result (an accumulate's
      // scratch) are filled in by post().
      g.stretches.push_back({origin ? origin + at[0] + done : nullptr, result ? result + at[1] + done : nullptr,
                             w.offset + target, n});
      g.elements += n;
      g.lo = std::min(g.lo, w.at + target);
      g.hi = std::max(g.hi, w.at + target + n * esize);
      done += n * esize;
    }
  });
  if (!g.stretches.empty()) post(w, bases, g, request);
}

void NativeAtomics::post(const Where& w, const AtomicCall& bases, Group& g, const RequestPtr& request) {
  const std::size_t esize = dtype_info(bases.dtype).size;
  const std::size_t bytes = g.elements * esize;
  // INC's ones and an accumulate's fetch room, one buffer for the group,
  // kept until its completion.
  const bool inc = bases.op == Op::Inc, scratch = bases.result == nullptr;
  std::shared_ptr<std::byte[]> room;
  if (inc || scratch) {
    room = std::make_shared_for_overwrite<std::byte[]>((inc + scratch) * bytes);
    std::byte* ones = room.get();
    std::byte* fetched = room.get() + (inc ? bytes : 0);
    for (auto& st : g.stretches) {
      if (inc) {
        for (std::size_t i = 0; i < st.count; ++i) std::memcpy(ones + i * esize, kOne.at(bases.dtype), esize);
        st.origin = ones;
        ones += st.count * esize;
      }
      if (scratch) {
        st.result = fetched;
        fetched += st.count * esize;
      }
    }
  }
  const Access part{g.lo, g.hi, bases.result != nullptr, bases.op != Op::NoOp, Channel::Native};
  if (order_) order_->wait_for_earlier(w.target, part);
  InFlightOps::Op* done = ops_.begin(w.target, request);
  done->keep = room;
  if (order_) order_->record(w.target, done->token, part);
  const Peer& p = s_.peers[w.target];
  InFlightOps::submit(done, [&](InFlightOps::Op* d) {
    s_.endpoint->transport().fetch_atomic_stretches(p.addr, AtomicPlan::native_op(bases.op), bases.dtype,
                                                    g.stretches, w.region, d);
  });
  s_.ring(w.target);
  g = Group{};
}

}  // namespace onesided::detail
