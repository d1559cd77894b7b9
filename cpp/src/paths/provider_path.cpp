// The provider path: a window whose ranks reach each other through the
// libfabric provider (another host, or shm without the shared-memory path).
//
// Invariants:
//  - Memory touched: puts and gets write and read the target's registered
//    window through the provider (fi_writemsg/fi_read, delivery complete;
//    a non-contiguous one as vectored fi_writemsg/fi_readmsg, up to the
//    provider's iov limits each, or a put of many short pieces as Scatter
//    messages the target writes, scattered_puts.hpp, and a get of many
//    as Gather messages the target answers, gathered_gets.hpp); a
//    rank's put or get on its own window is a memmove. Accumulate-style ops
//    take their dtype's route, fixed at creation: the provider's atomics
//    (native_atomics.cpp; a strided one as vectored atomics) or the
//    target's kernels (software_atomics.cpp; a strided one of short
//    chunks as piece runs, software_atomic_runs.cpp).
//  - Locks: none held while posting; completion state is in InFlightOps.
//  - Order: puts and gets are unordered; accumulate-style ops keep
//    accumulate_ordering as their route says.
//  - Completion: an operation is complete when the provider (or, for
//    software atomics, the target's reply) says so; flush(t) waits for
//    every operation to t issued before it.
//  - Notification: a Notify message, sent by whichever thread completes
//    the last operation it follows (InFlightOps::notify_after); messages
//    to one target arrive in send order, so notifications keep call order;
//    the target acknowledges each once counted, and flush(t) waits for
//    the acknowledgements of those posted before it.
#include "paths/provider_path.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "paths/paths.hpp"

namespace onesided::detail {

ProviderPath::ProviderPath(WindowState& s)
    : ProviderPath(s, "provider",
                   "libfabric RMA through provider " + s.provider +
                       "; accumulate-style ops by the provider's atomics (a strided one " +
                       std::to_string(s.endpoint->transport().max_atomic_stretches()) +
                       " stretch(es) per operation) or in software at the target, per dtype") {}

ProviderPath::ProviderPath(WindowState& s, std::string name, std::string description)
    : s_(s),
      name_(std::move(name)),
      description_(std::move(description)),
      ops_(s),
      order_(needs_order(s) ? std::make_unique<OrderKeeper>(s, ops_) : nullptr),
      native_(s, ops_, order_.get()),
      software_(s, ops_, order_.get()),
      scattered_(s, ops_),
      gathered_(s, ops_) {
  for (const auto& d : kDtypes) {
    const bool native = s.plan.path(d.id).native;
    routes_[static_cast<std::size_t>(d.id)] = native ? static_cast<AtomicRoute*>(&native_) : &software_;
    (native ? any_native_ : any_software_) = true;
  }
}

// Order needs watching only where native atomics may not keep it: a
// provider that lacks a required order, or keeps it only up to a size.
// (Ordering is per datatype (seed 000), and a dtype has one route, so
// native and software dtypes need no order between them.)
bool ProviderPath::needs_order(const WindowState& s) {
  bool any_native = false;
  for (const auto& d : kDtypes) any_native = any_native || s.plan.path(d.id).native;
  return any_native && !s.rule.native_always_ordered();
}

std::string ProviderPath::ordering() const { return s_.rule.describe(any_native_, any_software_); }

void ProviderPath::put(const Where& w, const void* origin, std::size_t bytes, const RequestPtr& request) {
  if (w.local) {
    std::memmove(w.local, origin, bytes);
    return;
  }
  const Peer& p = s_.peers[w.target];
  InFlightOps::submit(ops_.begin(w.target, request), [&](InFlightOps::Op* done) {
    s_.endpoint->transport().write(p.addr, origin, bytes, w.region, w.offset, done);
  });
  s_.ring(w.target);
}

void ProviderPath::get(const Where& w, void* result, std::size_t bytes, const RequestPtr& request) {
  if (w.local) {
    std::memmove(result, w.local, bytes);
    return;
  }
  const Peer& p = s_.peers[w.target];
  InFlightOps::submit(ops_.begin(w.target, request), [&](InFlightOps::Op* done) {
    s_.endpoint->transport().read(p.addr, result, bytes, w.region, w.offset, done);
  });
  s_.ring(w.target);
}

namespace {

// Pieces in groups of at most the provider's stretch limit, each group one
// vectored operation (`post` gets the stretches of one group).
template <class Post>
void in_stretches(std::span<const Piece> pieces, std::byte* local, std::uint64_t offset, std::size_t limit,
                  Post&& post) {
  std::vector<Transport::Stretch> group;
  for (std::size_t first = 0; first < pieces.size(); first += limit) {
    group.clear();
    for (const Piece& p : pieces.subspan(first, std::min(limit, pieces.size() - first)))
      group.push_back({local + p.origin, offset + p.target, p.bytes});
    post(std::span<const Transport::Stretch>(group));
  }
}

}  // namespace

void ProviderPath::put_pieces(const Where& w, const std::byte* origin, std::span<const Piece> pieces,
                              const RequestPtr& request) {
  if (w.local) return DataPath::put_pieces(w, origin, pieces, request);
  const Peer& p = s_.peers[w.target];
  Transport& t = s_.endpoint->transport();
  if (pieces_suit_messages(t, pieces, t.max_stretches())) {
    scattered_.put(w, origin, pieces, request);
    return s_.ring(w.target);
  }
  in_stretches(pieces, const_cast<std::byte*>(origin), w.offset, t.max_stretches(), [&](auto stretches) {
    InFlightOps::submit(ops_.begin(w.target, request), [&](InFlightOps::Op* done) {
      t.write_stretches(p.addr, stretches, w.region, done);
    });
  });
  s_.ring(w.target);
}

void ProviderPath::get_pieces(const Where& w, std::byte* result, std::span<const Piece> pieces,
                              const RequestPtr& request) {
  if (w.local) return DataPath::get_pieces(w, result, pieces, request);
  const Peer& p = s_.peers[w.target];
  Transport& t = s_.endpoint->transport();
  if (pieces_suit_messages(t, pieces, t.max_stretches())) {
    gathered_.get(w, result, pieces, request);
    return s_.ring(w.target);
  }
  in_stretches(pieces, result, w.offset, t.max_stretches(), [&](auto stretches) {
    InFlightOps::submit(ops_.begin(w.target, request), [&](InFlightOps::Op* done) {
      t.read_stretches(p.addr, stretches, w.region, done);
    });
  });
  s_.ring(w.target);
}

void ProviderPath::accumulate(const Where& w, const AtomicCall& call, const RequestPtr& request) {
  AtomicRoute* route = routes_[static_cast<std::size_t>(call.dtype)];
  route->apply(w, call, access_of(w, call, route == &native_), request);
}

void ProviderPath::accumulate_nest(const Where& w, const AtomicCall& c, const Nest<3>& nest,
                                   const RequestPtr& request) {
  if (routes_[static_cast<std::size_t>(c.dtype)] == &native_) {
    if (AtomicPlan::kind_of(c.function, c.op) == AtomicKind::Fetch) return native_.apply_nest(w, c, nest, request);
  } else if (!w.local && SoftwareAtomics::runs_suit(s_.endpoint->transport(), c, nest)) {
    software_.apply_nest(w, c, nest, request);
    return s_.ring(w.target);
  }
  DataPath::accumulate_nest(w, c, nest, request);
}

std::unique_ptr<DataPath> provider_path(WindowState& state, SoftwareAtomics*& software) {
  auto path = std::make_unique<ProviderPath>(state);
  software = &path->software();
  return path;
}

}  // namespace onesided::detail
