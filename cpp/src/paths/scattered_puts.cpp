// Scattered puts; the invariants are in scattered_puts.hpp.
#include "paths/scattered_puts.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace onesided::detail {
void ScatteredPuts::put(const Where& w, const std::byte* origin, std::span<const Piece> pieces,
                        const RequestPtr& request) {
  const std::size_t room = piece_message_room(s_.endpoint->transport());
  // Reused by every message of this put: the runs are planned first (32
  // bytes per run, no data), then the message is written once, runs then
  // the pieces' bytes straight from the origin buffer.
  std::vector<PieceRun> runs;
  std::vector<std::byte> message(room);
  for (std::size_t first = 0, data = 0; first < pieces.size();) {
    const std::size_t end = plan_runs(pieces, first, runs, data, [&](std::size_t n, std::size_t bytes) {
      return n * sizeof(PieceRun) + bytes <= room;
    });
    const std::size_t head = runs.size() * sizeof(PieceRun);
    std::memcpy(message.data(), runs.data(), head);
    std::byte* out = message.data() + head;
    for (std::size_t i = first; i < end; ++i) {
      copy_piece(out, origin + pieces[i].origin, pieces[i].bytes);
      out += pieces[i].bytes;
    }
    InFlightOps::Op* pending = ops_.begin(w.target, request);
    pending->result = nullptr;
    pending->bytes = 0;
    Header h = s_.header(MsgKind::Scatter, w.target, reinterpret_cast<std::uint64_t>(pending));
    h.count = static_cast<std::uint32_t>(runs.size());
    h.offset = w.at;
    InFlightOps::submit(pending, [&](InFlightOps::Op*) { s_.send(w.target, h, message.data(), head + data); });
    first = end;
  }
}

void ScatteredPuts::reply(const WindowState& s, const Header& h, const char* error) {
  const int origin = static_cast<int>(h.origin);
  if (!error) return s.send(origin, s.header(MsgKind::ScatterDone, origin, h.token));
  s.send(origin, s.header(MsgKind::ScatterDone, origin, h.token, kFailed), error, std::strlen(error));
}

void ScatteredPuts::on_reply(const Header& h, const std::byte* payload, std::size_t len) {
  auto* pending = reinterpret_cast<InFlightOps::Op*>(h.token);
  if (!(h.flags & kFailed)) return pending->complete(nullptr);
  const std::string reason(reinterpret_cast<const char*>(payload), len);
  pending->complete(reason.c_str());
}

}  // namespace onesided::detail
