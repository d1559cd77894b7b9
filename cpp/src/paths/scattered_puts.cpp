// Scattered puts; the invariants are in scattered_puts.hpp.
#include "paths/scattered_puts.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace onesided::detail {
namespace {

// Pieces this short or shorter travel as messages: past it a vectored
// write moves enough bytes per iov entry to be worth its own operation.
constexpr std::size_t kShortPiece = 256;
// An eager message this large holds a useful batch of pieces.
constexpr std::size_t kEagerEnough = 2048;

}  // namespace

// Messages that leave at once where the provider has them and they are not
// tiny (shm: 4 KiB; a larger message waits for a rendezvous with the
// target's progress, which costs more than sending two), else the largest.
std::size_t ScatteredPuts::message_room() const {
  const Transport& t = s_.endpoint->transport();
  const std::size_t eager = t.eager_message_size();
  return (eager >= kEagerEnough ? eager : t.max_message_size()) - sizeof(Header);
}

bool ScatteredPuts::suits(std::span<const Piece> pieces, std::size_t stretches) const {
  if (pieces.size() <= stretches) return false;  // one vectored write already
  // Every piece short, so any one fits a message with room to spare.
  if (message_room() < 4 * (sizeof(ScatterEntry) + kShortPiece)) return false;
  for (const Piece& p : pieces)
    if (p.bytes > kShortPiece) return false;
  return true;
}

void ScatteredPuts::put(const Where& w, const std::byte* origin, std::span<const Piece> pieces,
                        const RequestPtr& request) {
  const std::size_t room = message_room();
  // Reused by every message of this put: the entries are planned first
  // (32 bytes per run, no data), then the message is written once, entries
  // then the pieces' bytes straight from the origin buffer.
  std::vector<ScatterEntry> entries;
  std::vector<std::byte> message(room);
  for (std::size_t first = 0; first < pieces.size();) {
    // Plan: as many pieces as fit. A piece of the size of the entry's and
    // one stride further extends it (the stride is set by its second
    // piece); else it opens a new entry. suits() saw that any one piece
    // fits an empty message.
    entries.clear();
    std::size_t data = 0, end = first;
    for (; end < pieces.size(); ++end) {
      const Piece& p = pieces[end];
      bool extends = false;
      std::int64_t step = 0;
      if (!entries.empty()) {
        const ScatterEntry& e = entries.back();
        const std::uint64_t last = e.offset + static_cast<std::uint64_t>(e.stride) * (e.count - 1);
        step = static_cast<std::int64_t>(p.target - last);  // modular: any sign
        extends = e.bytes == p.bytes && (e.count == 1 || step == e.stride);
      }
      if ((entries.size() + (extends ? 0 : 1)) * sizeof(ScatterEntry) + data + p.bytes > room) break;
      if (extends) {
        if (entries.back().count == 1) entries.back().stride = step;
        ++entries.back().count;
      } else {
        entries.push_back({p.target, 0, p.bytes, 1});
      }
      data += p.bytes;
    }
    // Write: the entries, then each piece's bytes in order.
    const std::size_t head = entries.size() * sizeof(ScatterEntry);
    std::memcpy(message.data(), entries.data(), head);
    std::byte* out = message.data() + head;
    for (std::size_t i = first; i < end; ++i) {
      std::memcpy(out, origin + pieces[i].origin, pieces[i].bytes);
      out += pieces[i].bytes;
    }
    InFlightOps::Op* pending = ops_.begin(w.target, request);
    pending->result = nullptr;
    pending->bytes = 0;
    Header h = s_.header(MsgKind::Scatter, w.target, reinterpret_cast<std::uint64_t>(pending));
    h.count = static_cast<std::uint32_t>(entries.size());
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
