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
  std::vector<ScatterEntry> entries;
  std::vector<std::byte> data;
  data.reserve(room);
  auto send = [&] {
    if (entries.empty()) return;
    std::vector<std::byte> message(entries.size() * sizeof(ScatterEntry) + data.size());
    std::memcpy(message.data(), entries.data(), entries.size() * sizeof(ScatterEntry));
    std::memcpy(message.data() + entries.size() * sizeof(ScatterEntry), data.data(), data.size());
    InFlightOps::Op* pending = ops_.begin(w.target, request);
    pending->result = nullptr;
    pending->bytes = 0;
    Header h = s_.header(MsgKind::Scatter, w.target, reinterpret_cast<std::uint64_t>(pending));
    h.count = static_cast<std::uint32_t>(entries.size());
    h.offset = w.at;
    InFlightOps::submit(pending, [&](InFlightOps::Op*) { s_.send(w.target, h, message.data(), message.size()); });
    entries.clear();
    data.clear();
  };
  for (const Piece& p : pieces) {
    // A piece of the size of the entry's and one stride further extends it
    // (the stride is set by its second piece); else a new entry, in a new
    // message when this one is full (suits() saw that every piece fits).
    bool extends = false;
    if (!entries.empty()) {
      ScatterEntry& e = entries.back();
      const std::uint64_t last = e.offset + static_cast<std::uint64_t>(e.stride) * (e.count - 1);
      const auto step = static_cast<std::int64_t>(p.target - last);  // modular: any sign
      extends = e.bytes == p.bytes && (e.count == 1 || step == e.stride);
      if (extends && e.count == 1) e.stride = step;
    }
    if ((entries.size() + (extends ? 0 : 1)) * sizeof(ScatterEntry) + data.size() + p.bytes > room) {
      send();
      extends = false;
    }
    if (extends) ++entries.back().count;
    else entries.push_back({p.target, 0, p.bytes, 1});
    data.insert(data.end(), origin + p.origin, origin + p.origin + p.bytes);
  }
  send();
}

void ScatteredPuts::reply(const WindowState& s, const Header& h, const char* error) {
  const int origin = static_cast<int>(h.origin);
  if (!error) return s.send(origin, s.header(MsgKind::AtomicDone, origin, h.token));
  s.send(origin, s.header(MsgKind::AtomicDone, origin, h.token, kFailed), error, std::strlen(error));
}

}  // namespace onesided::detail
