#include "window/state.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace onesided::detail {
namespace {

// Gone, or a zombie nobody has reaped yet.
bool dead(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  std::FILE* f = std::fopen(path, "r");
  if (!f) return false;
  char state = 0;
  // pid (comm) state ...: the state follows the last ')'.
  char buf[512];
  const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  if (const char* close = std::strrchr(buf, ')'); close && close[1] == ' ') state = close[2];
  return state == 'Z' || state == 'X';
}

}  // namespace

void WindowState::check_peers() const {
  if (!same_host) return;
  for (int r = 0; r < nranks; ++r)
    if (r != rank && peers[r].pid > 0 && dead(static_cast<pid_t>(peers[r].pid))) {
      int none = -1;
      dead_rank.compare_exchange_strong(none, r, std::memory_order_acq_rel);
      raise_dead(r);
    }
}

void WindowState::raise_dead(int r) const {
  raise(ErrorCategory::Transport, "rank " + std::to_string(r) + " (pid " + std::to_string(peers[r].pid) +
                                      ") has died; the window cannot complete and is unusable (free it)");
}

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
