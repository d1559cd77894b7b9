// Scattered puts: a non-contiguous put of many short pieces (a column of a
// matrix) on the provider path, sent as messages that carry the pieces'
// target offsets and their bytes, which the target's progress engine
// writes into its window. One message replaces up to hundreds of vectored
// RMA writes, each limited to the provider's iov limit (4 on shm and tcp)
// and each needing the target's progress anyway on those providers.
//
// Invariants:
//  - Memory touched: at the origin, only reads of the origin buffer, into
//    the message; at the target, the window's bytes each piece names,
//    written by the progress thread, after the target checked that every
//    piece of the message lies in its exposed memory (a message with any
//    piece outside is answered with a failure and writes nothing).
//  - Locks: none. Puts are not atomic (MPI 4.1 12.7: a put that conflicts
//    with another access in the same epoch is erroneous), so the target
//    takes no atomic lock, as a provider's RMA write takes none.
//  - Order: none promised among puts, as for RMA puts; the messages of one
//    origin arrive in send order anyway (transport.hpp).
//  - Completion: each message is one InFlightOps operation, complete when
//    the target's ScatterDone arrives, that is once its bytes are written
//    at the target; flush(t) and notifications wait for it like any put.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "paths/data_path.hpp"
#include "paths/in_flight_ops.hpp"
#include "state/window_state.hpp"

namespace onesided::detail {

class ScatteredPuts {
 public:
  ScatteredPuts(WindowState& s, InFlightOps& ops) : s_(s), ops_(ops) {}

  // Whether `pieces` are better sent as messages than as vectored writes
  // of at most `stretches` each: more than one write's worth, every one
  // short (decided per batch, from its shape only).
  bool suits(std::span<const Piece> pieces, std::size_t stretches) const;
  // Origin side: the pieces of `origin` to the target at `w`.
  void put(const Where& w, const std::byte* origin, std::span<const Piece> pieces, const RequestPtr& request);
  // Target side: a Scatter message. `local` finds the bytes of a checked
  // range of this rank's window (null: outside it).
  template <class Local>
  static void serve(const WindowState& s, const Header& h, const std::byte* payload, std::size_t len,
                    Local&& local);
  // Origin side: the target's ScatterDone (payload: the reason, if failed).
  static void on_reply(const Header& h, const std::byte* payload, std::size_t len);

 private:
  static void reply(const WindowState& s, const Header& h, const char* error);
  std::size_t message_room() const;  // payload bytes per message
  WindowState& s_;
  InFlightOps& ops_;
};

// The message: Header (offset: the Where's `at`; count: entries), then
// `count` entries, then the pieces' bytes in order. An entry is `count`
// pieces of `bytes` each, the first `offset` bytes past `at`, each next one
// `stride` bytes (of either sign) after the one before: a column of a
// matrix is one entry whatever its length.
struct ScatterEntry {
  std::uint64_t offset;
  std::int64_t stride;
  std::uint64_t bytes;
  std::uint64_t count;
};

template <class Local>
void ScatteredPuts::serve(const WindowState& s, const Header& h, const std::byte* payload, std::size_t len,
                          Local&& local) {
  using i128 = __int128;
  const std::size_t n = h.count;
  if (len / sizeof(ScatterEntry) < n) return reply(s, h, "malformed scattered put");
  auto entry = [&](std::size_t i) {
    ScatterEntry e;
    std::memcpy(&e, payload + i * sizeof(ScatterEntry), sizeof e);
    return e;
  };
  // Every piece checked before any is written: the bytes add up, and the
  // span from the lowest piece to the end of the highest lies in the
  // window (one range on a window's one memory); on a dynamic window whose
  // span crosses memory that is not attached, each piece on its own.
  i128 left = len - n * sizeof(ScatterEntry), lo = UINT64_MAX, hi = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const ScatterEntry e = entry(i);
    const i128 first = static_cast<i128>(h.offset) + e.offset;
    const i128 last = first + static_cast<i128>(e.stride) * (e.count ? e.count - 1 : 0);
    const i128 data = static_cast<i128>(e.bytes) * e.count;
    if (e.count == 0 || e.count > left || data > left || std::min(first, last) < 0 ||
        std::max(first, last) + e.bytes > UINT64_MAX)
      return reply(s, h, "malformed scattered put");
    left -= data;
    lo = std::min({lo, first, last});
    hi = std::max({hi, first + e.bytes, last + e.bytes});
  }
  if (n == 0) return reply(s, h, nullptr);
  std::byte* base = local(static_cast<std::uint64_t>(lo), static_cast<std::size_t>(hi - lo));
  auto each_piece = [&](auto&& f) {
    for (std::size_t i = 0; i < n; ++i) {
      const ScatterEntry e = entry(i);
      std::uint64_t at = h.offset + e.offset;
      for (std::uint64_t k = 0; k < e.count; ++k, at += static_cast<std::uint64_t>(e.stride))
        if (!f(at, e.bytes)) return false;
    }
    return true;
  };
  if (!base && !each_piece([&](std::uint64_t at, std::size_t bytes) { return local(at, bytes) != nullptr; }))
    return reply(s, h, "scattered put outside the window (checked at the target)");
  const std::byte* data = payload + n * sizeof(ScatterEntry);
  each_piece([&](std::uint64_t at, std::size_t bytes) {
    std::memcpy(base ? base + (at - static_cast<std::uint64_t>(lo)) : local(at, bytes), data, bytes);
    data += bytes;
    return true;
  });
  reply(s, h, nullptr);
}

}  // namespace onesided::detail
