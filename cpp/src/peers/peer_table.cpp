#include "peers/peer_table.hpp"

#include <cstring>
#include <vector>


namespace onesided::detail {

void PeerTable::check_peers() const {
  for (int r = 0; r < nranks; ++r)
    if (peers[r].life && peers[r].life->gone()) {
      int none = -1;
      dead_rank.compare_exchange_strong(none, r, std::memory_order_acq_rel);
      raise_dead(r);
    }
}

void PeerTable::raise_dead(int r) const {
  // A verdict is kept once reached, so asking again gives the same words.
  const auto why = peers[r].life ? peers[r].life->gone() : std::nullopt;
  raise(ErrorCategory::Transport, "rank " + std::to_string(r) + " " + why.value_or("has died") +
                                      "; the window cannot complete and is unusable (free it)");
}

void PeerTable::send(int target, const Header& h, const void* payload, std::size_t len) const {
  if (len == 0) {
    endpoint->transport().send(peers[target].addr, &h, sizeof h);
  } else {
    std::vector<std::byte> msg(sizeof h + len);
    std::memcpy(msg.data(), &h, sizeof h);
    std::memcpy(msg.data() + sizeof h, payload, len);
    endpoint->transport().send(peers[target].addr, msg.data(), msg.size());
  }
  ring(target);
}

}  // namespace onesided::detail
