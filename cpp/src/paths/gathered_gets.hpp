// Gathered gets: a non-contiguous get of many short pieces (a column of a
// matrix) on the provider path, asked for by a message that carries the
// pieces' target offsets as runs (piece_runs.hpp); the target's progress
// engine reads the pieces and answers with their bytes, which the origin's
// progress writes into the result buffer. One message pair replaces up to
// hundreds of vectored RMA reads, each limited to the provider's iov limit
// (4 on shm and tcp) and each needing the target's progress anyway on
// those providers. The mirror of scattered_puts.hpp.
//
// Invariants:
//  - Memory touched: at the target, reads of the window's bytes each piece
//    names, by the progress thread, after the target checked that every
//    piece of the message lies in its exposed memory (a message with any
//    piece outside is answered with a failure and reads nothing); at the
//    origin, writes of the result buffer's pieces, by whichever thread
//    handles the reply, before the operation completes.
//  - Locks: none. Gets are not atomic (MPI 4.1 12.7: a get that conflicts
//    with a put in the same epoch is erroneous), so the target takes no
//    atomic lock, as a provider's RMA read takes none.
//  - Order: none promised among gets, as for RMA gets.
//  - Completion: each message is one InFlightOps operation, complete when
//    the target's GatherDone has been written into the result; flush(t)
//    waits for it like any get.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "paths/data_path.hpp"
#include "paths/in_flight_ops.hpp"
#include "paths/piece_runs.hpp"
#include "state/window_state.hpp"

namespace onesided::detail {

class GatheredGets {
 public:
  GatheredGets(WindowState& s, InFlightOps& ops) : s_(s), ops_(ops) {}

  // Origin side: the pieces of `result` from the target at `w`.
  void get(const Where& w, std::byte* result, std::span<const Piece> pieces, const RequestPtr& request);
  // Target side: a Gather message (Header, then its runs). `local` finds
  // the bytes of a checked range of this rank's window (null: outside it).
  template <class Local>
  static void serve(const WindowState& s, const Header& h, const std::byte* payload, std::size_t len,
                    Local&& local);
  // Origin side: the target's GatherDone (payload: the pieces' bytes in
  // order, or the reason it failed).
  static void on_reply(const Header& h, const std::byte* payload, std::size_t len);

 private:
  static void reply(const WindowState& s, const Header& h, const char* error, const std::byte* data = nullptr,
                    std::size_t len = 0);
  WindowState& s_;
  InFlightOps& ops_;
};

template <class Local>
void GatheredGets::serve(const WindowState& s, const Header& h, const std::byte* payload, std::size_t len,
                         Local&& local) {
  // The reply carries every piece, so their bytes must fit one message.
  const CheckedRuns runs(h, payload, len, piece_message_room(s.endpoint->transport()), local);
  if (runs.error()) return reply(s, h, runs.error());
  std::vector<std::byte> data(runs.data());
  std::byte* out = data.data();
  runs.each([&](std::byte* at, std::size_t bytes) {
    copy_piece(out, at, bytes);
    out += bytes;
    return true;
  });
  reply(s, h, nullptr, data.data(), data.size());
}

}  // namespace onesided::detail
