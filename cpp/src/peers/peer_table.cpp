#include "peers/peer_table.hpp"

#include <cstring>
#include <vector>

#include "memory/process.hpp"

namespace onesided::detail {

void PeerTable::check_peers() const {
  if (!same_host) return;
  for (int r = 0; r < nranks; ++r)
    if (r != rank && peers[r].pid > 0 && process_gone(static_cast<pid_t>(peers[r].pid))) {
      int none = -1;
      dead_rank.compare_exchange_strong(none, r, std::memory_order_acq_rel);
      raise_dead(r);
    }
}

void PeerTable::raise_dead(int r) const {
  raise(ErrorCategory::Transport, "rank " + std::to_string(r) + " (pid " + std::to_string(peers[r].pid) +
                                      ") has died; the window cannot complete and is unusable (free it)");
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
