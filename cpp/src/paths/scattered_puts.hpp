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

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "paths/data_path.hpp"
#include "paths/in_flight_ops.hpp"
#include "paths/piece_runs.hpp"
#include "state/window_state.hpp"

namespace onesided::detail {

class ScatteredPuts {
 public:
  ScatteredPuts(WindowState& s, InFlightOps& ops) : s_(s), ops_(ops) {}

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
  WindowState& s_;
  InFlightOps& ops_;
};

// The message: Header (offset: the Where's `at`; count: runs), then
// `count` PieceRuns (piece_runs.hpp), then the pieces' bytes in order.
template <class Local>
void ScatteredPuts::serve(const WindowState& s, const Header& h, const std::byte* payload, std::size_t len,
                          Local&& local) {
  const std::size_t head = std::size_t{h.count} * sizeof(PieceRun);
  const CheckedRuns runs(h, payload, len, len >= head ? len - head : 0, local);
  if (runs.error()) return reply(s, h, runs.error());
  const std::byte* data = payload + head;
  runs.each([&](std::byte* at, std::size_t bytes) {
    copy_piece(at, data, bytes);
    data += bytes;
    return true;
  });
  reply(s, h, nullptr);
}

}  // namespace onesided::detail
