// The seam between a window's semantics (epochs, bounds, locks) and the way
// its data moves. A window picks one DataPath at creation, from what its
// ranks agreed (window/create.cpp), and never asks again which one it has:
// every operation is one virtual call on it.
//
// The paths (each file opens with its invariants):
//   shared_memory_path.cpp  one host, memory every rank maps: loads, stores, CPU atomics
//   provider_path.cpp       libfabric RMA; accumulate-style ops per dtype through
//                           native_atomics.cpp (the provider's) or software_atomics.cpp
//                           (applied by the target's progress engine)
//   cross_memory_path.cpp   the provider path, with puts and gets by cross-memory attach
//   nasty_path.cpp          nasty mode: a wrapper that holds and reorders any path's ops
//
// What every path guarantees (the window's callers rely on it):
//  - Targets are checked before a path sees them: a Where is inside the
//    target's window (or an attached region).
//  - accumulate() is the one entry for every accumulate-style op, so
//    atomicity (one path per memory) and accumulate_ordering are decided in
//    one place per path.
//  - flush(t) returns once every operation to t issued before it (by any
//    thread) is complete at t; flush_all() the same for every target.
//  - notify(t, i) adds one to t's notification counter i once every
//    operation to t issued before it (by any thread) is complete at t, never
//    earlier; notifications to one target take effect in call order.
#pragma once

#include <cstddef>
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "layout/nest.hpp"
#include "onesided/types.hpp"
#include "order/order_tracker.hpp"
#include "paths/request_state.hpp"
#include "transport/transport.hpp"

namespace onesided::detail {

using RequestPtr = std::shared_ptr<RequestState>;

// Where an operation lands, checked: the provider's handle for the memory
// and the offset in it, the position in the target's address space that
// ordering and the target's own checks use (window offset, or the absolute
// address on a dynamic window), and, for this rank, the local bytes.
struct Where {
  int target = 0;
  RemoteRegion region;
  std::uint64_t offset = 0;
  std::uint64_t at = 0;
  std::byte* local = nullptr;  // non-null only when target is this rank
};

// The same place, `bytes` further on (inside what was checked).
inline Where shifted(const Where& w, std::uint64_t bytes) {
  return {w.target, w.region, w.offset + bytes, w.at + bytes, w.local ? w.local + bytes : nullptr};
}

// One stretch of a non-contiguous put or get (layout/runs.hpp): `bytes`
// at `origin` bytes from the origin's base, to or from `target` bytes past
// the Where, which was checked to cover every piece.
struct Piece {
  std::int64_t origin;
  std::uint64_t target;
  std::size_t bytes;
};

// One accumulate-style call. Operands follow the kernels' convention:
// origin2 is the second operand of two-operand ops (the swap value).
struct AtomicCall {
  Function function;
  Op op;
  const void* origin;
  const void* origin2;
  void* result;  // null: nothing fetched
  std::size_t count;
  Dtype dtype;
};

// One chunk of an accumulate-style call walked by pieces or a nest: `bases`
// holds the buffers' bases (origin2 unused: two-operand ops never walk),
// `at` the chunk's offsets from them (origin, result; the target's is the
// caller's), `bytes` its length.
inline AtomicCall chunk_of(const AtomicCall& bases, const std::array<std::int64_t, 3>& at, std::uint64_t bytes) {
  const auto* origin = static_cast<const std::byte*>(bases.origin);
  auto* result = static_cast<std::byte*>(bases.result);
  return {bases.function,
          bases.op,
          origin ? origin + at[0] : nullptr,
          nullptr,
          result ? result + at[1] : nullptr,
          static_cast<std::size_t>(bytes / dtype_info(bases.dtype).size),
          bases.dtype};
}

// What an accumulate-style call touches, for ordering (order_tracker.hpp);
// `native`: whether its dtype runs on the provider's atomics.
inline Access access_of(const Where& w, const AtomicCall& c, bool native) {
  const std::uint64_t bytes = c.count * dtype_info(c.dtype).size;
  return {w.at, w.at + bytes, c.result != nullptr, c.op != Op::NoOp, native ? Channel::Native : Channel::Messages};
}

// A nest's chunks as pieces, handed on in batches, so a nest of a million
// chunks costs a bounded amount of memory.
template <class Hand>
void in_piece_batches(const Nest<2>& nest, Hand&& hand) {
  constexpr std::uint64_t kBatch = 1024;
  std::array<Piece, kBatch> batch;
  std::size_t n = 0;
  nest.for_each_chunk([&](const std::array<std::int64_t, 2>& at, std::uint64_t bytes) {
    batch[n++] = {at[0], static_cast<std::uint64_t>(at[1]), bytes};
    if (n == kBatch) hand(std::span<const Piece>(batch.data(), n)), n = 0;
  });
  if (n) hand(std::span<const Piece>(batch.data(), n));
}

class DataPath {
 public:
  virtual ~DataPath() = default;
  // A short name ("shared-memory", "provider", ...) and one line on what it does.
  virtual const std::string& name() const = 0;
  virtual const std::string& description() const = 0;
  // True when every operation is complete at its target when its call returns.
  virtual bool completes_in_call() const = 0;
  // True when a plain get (no request) may write its result after its call
  // returns, at the next completion point: its caller must keep the result
  // buffer until then. Where calls complete in place, one that stages
  // small gets (the cross-memory path) says so here.
  virtual bool holds_get_results() const { return !completes_in_call(); }
  // True when other ranks' RMA reaches this rank's memory only as this
  // process polls the transport (a provider's RMA over shm is applied by
  // the target's progress): Sync() then polls once, so that a loop of
  // Syncs waiting for a flag progresses the transport itself and the
  // background thread stands aside for it, as for a loop of flushes.
  virtual bool incoming_needs_polls() const { return false; }
  // For Get_info: which accumulate orders are kept, and by whom.
  virtual std::string ordering() const = 0;
  // Whether operations this path posted may still be reported complete
  // (a Free that was interrupted or gave up waiting, a window dropped
  // without Free): what their completions touch must then outlive the
  // window (Window::~Window keeps it). Read by the thread dropping the window.
  virtual bool in_flight() const { return false; }

  virtual void put(const Where& w, const void* origin, std::size_t bytes, const RequestPtr& request) = 0;
  virtual void get(const Where& w, void* result, std::size_t bytes, const RequestPtr& request) = 0;
  virtual void accumulate(const Where& w, const AtomicCall& call, const RequestPtr& request) = 0;
  // A non-contiguous put or get, as pieces. By default one put or get per
  // piece; a path that can move several stretches in one go overrides them.
  virtual void put_pieces(const Where& w, const std::byte* origin, std::span<const Piece> pieces,
                          const RequestPtr& request) {
    for (const Piece& p : pieces) put(shifted(w, p.target), origin + p.origin, p.bytes, request);
  }
  virtual void get_pieces(const Where& w, std::byte* result, std::span<const Piece> pieces,
                          const RequestPtr& request) {
    for (const Piece& p : pieces) get(shifted(w, p.target), result + p.origin, p.bytes, request);
  }
  // A put or get whose layouts pair as one loop nest (layout/nest.hpp; side
  // 0 the buffer, side 1 the target, offsets from the Where). By default the
  // nest's chunks go to put_pieces/get_pieces in batches; a path that can
  // run the loops itself overrides them.
  virtual void put_nest(const Where& w, const std::byte* origin, const Nest<2>& nest, const RequestPtr& request) {
    in_piece_batches(nest, [&](std::span<const Piece> p) { put_pieces(w, origin, p, request); });
  }
  virtual void get_nest(const Where& w, std::byte* result, const Nest<2>& nest, const RequestPtr& request) {
    in_piece_batches(nest, [&](std::span<const Piece> p) { get_pieces(w, result, p, request); });
  }
  // An accumulate-style call (no origin2) whose origin, result and target
  // layouts pair as one loop nest (sides 0, 1, 2; the target's offsets
  // from the Where), `c` holding the buffers' bases. By default one
  // accumulate() per chunk, so atomicity and ordering per element are
  // those of accumulate(); a path that can run the loops itself overrides it.
  virtual void accumulate_nest(const Where& w, const AtomicCall& c, const Nest<3>& nest, const RequestPtr& request) {
    nest.for_each_chunk([&](const std::array<std::int64_t, 3>& at, std::uint64_t bytes) {
      accumulate(shifted(w, static_cast<std::uint64_t>(at[2])), chunk_of(c, at, bytes), request);
    });
  }
  virtual void flush(int target) = 0;
  virtual void flush_all() = 0;
  // Flush_local: only the origin's buffers need be free again. Every path
  // completes remotely (which implies it), so by default a flush; the race
  // checker keeps the accesses open, as MPI does.
  // `target` < 0: every target (Flush_local_all).
  virtual void flush_local(int target) { target < 0 ? flush_all() : flush(target); }
  // flush(target)'s condition (target < 0: flush_all's) as a request that
  // completes on its own, without waiting here: an awaitable flush. Paths
  // whose operations complete in their call have nothing in flight, and the
  // request is complete at once.
  virtual void complete_when_drained(int /*target*/, const RequestPtr& /*request*/) {}

  // Notified RMA (window/notify_counters.hpp): see the guarantees above.
  // `index` was checked against the window's counters. A request covers
  // the notification, so it completes only once the target's counter has
  // been incremented, after the data; so does flush(target).
  virtual void notify(int target, std::size_t index, const RequestPtr& request) = 0;
  // How notify() reaches the target, for the window's report.
  virtual std::string notification() const = 0;

  // This rank exposes its memory to origins for a while (a lock granted by
  // message, a Post): a path that needs the target's progress keeps it hot.
  virtual void expect_incoming(int delta) = 0;
};

}  // namespace onesided::detail
