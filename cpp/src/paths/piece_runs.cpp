// When pieces travel as messages; the rest is in piece_runs.hpp.
#include "paths/piece_runs.hpp"

namespace onesided::detail {
namespace {

// Pieces this short or shorter travel as messages: past it one RMA per
// iov entry moves enough bytes to be worth its own operation.
constexpr std::size_t kShortPiece = 256;
// An eager message this large holds a useful batch of pieces.
constexpr std::size_t kEagerEnough = 2048;

}  // namespace

std::size_t piece_message_room(const Transport& t) {
  const std::size_t eager = t.eager_message_size();
  return (eager >= kEagerEnough ? eager : t.max_message_size()) - sizeof(Header);
}

namespace {

// Room in a message for several pieces of the longest short size.
bool room_for_short_pieces(const Transport& t) {
  return piece_message_room(t) >= 4 * (sizeof(PieceRun) + kShortPiece);
}

}  // namespace

bool pieces_suit_messages(const Transport& t, std::span<const Piece> pieces, std::size_t stretches) {
  if (pieces.size() <= stretches) return false;  // one vectored RMA already
  // Every piece short, so any one fits a message with room to spare.
  if (!room_for_short_pieces(t)) return false;
  for (const Piece& p : pieces)
    if (p.bytes > kShortPiece) return false;
  return true;
}

bool chunks_suit_messages(const Transport& t, std::uint64_t chunk, std::uint64_t chunks) {
  return chunks > 1 && chunk > 0 && chunk <= kShortPiece && room_for_short_pieces(t);
}

}  // namespace onesided::detail
