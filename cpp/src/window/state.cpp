#include "window/state.hpp"

#include <cstring>
#include <vector>

namespace onesided::detail {

void WindowState::send(int target, const Header& h, const void* payload, std::size_t len) const {
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
