// Invariants: nothing is ever written to a liveness connection nor read
// from it, so any event on one (readable, hang-up, error) is its end; a
// verdict, once reached, is kept (a broken socket tells its error once).
#include "peers/liveness.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "memory/process.hpp"
#include "onesided/error.hpp"

namespace onesided::detail {
namespace {

class ProcessWatch final : public LifeSign {
 public:
  explicit ProcessWatch(pid_t pid) : pid_(pid) {}
  std::optional<std::string> gone() const override {
    if (!process_gone(pid_)) return std::nullopt;
    return "(pid " + std::to_string(pid_) + ") has died";
  }

 private:
  pid_t pid_;
};

// The listener: made once, kept open until the process exits (its close is
// what tells the peers). Connections that peers made are accepted when a
// window is made, and kept, so the backlog never fills; closing one would
// tell that peer this process had died.
struct Listener {
  std::mutex mutex;
  bool opened = false;
  int fd = -1;
  std::uint16_t port = 0;
  std::vector<int> accepted;
};
Listener& listener() {
  static Listener* l = new Listener;  // never destroyed: sockets close at exit
  return *l;
}

// A listening socket of `family` on any address and a free port, or -1.
int listen_any(int family, std::uint16_t& port) {
  sockaddr_storage a{};
  a.ss_family = static_cast<sa_family_t>(family);
  if (family == AF_INET6) reinterpret_cast<sockaddr_in6*>(&a)->sin6_addr = in6addr_any;
  const socklen_t size = family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  socklen_t len = size;
  const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  int off = 0;  // dual-stack, so peers reach it by either family
  if (family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
  auto* sa = reinterpret_cast<sockaddr*>(&a);
  if (::bind(fd, sa, size) != 0 || ::listen(fd, SOMAXCONN) != 0 || ::getsockname(fd, sa, &len) != 0) {
    ::close(fd);
    return -1;
  }
  port = ntohs(family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&a)->sin6_port
                                  : reinterpret_cast<sockaddr_in*>(&a)->sin_port);
  return fd;
}

// IPv6 (dual-stack) where the host has it, else IPv4.
int open_listener(std::uint16_t& port) {
  const int fd = listen_any(AF_INET6, port);
  return fd >= 0 ? fd : listen_any(AF_INET, port);
}

void accept_pending(Listener& l) {
  if (l.fd < 0) return;
  for (int c; (c = ::accept4(l.fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0;) l.accepted.push_back(c);
}

// The keepalive that lets the kernel, not the peer's process, answer; and
// the limit after which a silent host counts as gone (TCP_USER_TIMEOUT
// decides the keepalive's end as well as a connect's).
void keep_alive(int fd, std::chrono::seconds timeout) {
  const int on = 1, idle = 1, interval = 1, count = static_cast<int>(timeout.count());
  const unsigned user_ms = static_cast<unsigned>(timeout.count()) * 1000u;
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_ms, sizeof user_ms);
}

class LinkWatch final : public LifeSign {
 public:
  LinkWatch(std::string who, std::string where, std::chrono::seconds timeout)
      : who_(std::move(who)), where_(std::move(where)), timeout_(timeout),
        started_(std::chrono::steady_clock::now()) {}
  ~LinkWatch() override {
    if (fd_ >= 0) ::close(fd_);
  }
  LinkWatch(const LinkWatch&) = delete;
  LinkWatch& operator=(const LinkWatch&) = delete;

  // Starts the connection (non-blocking): false when it cannot even start
  // (not an IP address, no socket), a refusal is a verdict.
  bool connect(const std::string& ip, std::uint16_t port) {
    sockaddr_storage ss{};
    socklen_t len = 0;
    if (auto* a4 = reinterpret_cast<sockaddr_in*>(&ss); ::inet_pton(AF_INET, ip.c_str(), &a4->sin_addr) == 1) {
      a4->sin_family = AF_INET;
      a4->sin_port = htons(port);
      len = sizeof *a4;
    } else if (auto* a6 = reinterpret_cast<sockaddr_in6*>(&ss); ::inet_pton(AF_INET6, ip.c_str(), &a6->sin6_addr) == 1) {
      a6->sin6_family = AF_INET6;
      a6->sin6_port = htons(port);
      len = sizeof *a6;
    } else {
      return false;
    }
    fd_ = ::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd_ < 0) return false;
    keep_alive(fd_, timeout_);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&ss), len) == 0) connected_ = true;
    else if (errno != EINPROGRESS) verdict_ = broken(errno);
    return true;
  }

  std::optional<std::string> gone() const override {
    std::lock_guard lk(mutex_);
    if (!verdict_.empty()) return who_ + " " + verdict_;
    pollfd p{fd_, static_cast<short>(POLLIN | POLLOUT | POLLRDHUP), 0};
    if (::poll(&p, 1, 0) < 0) return std::nullopt;  // EINTR: look again next time
    const bool ended = p.revents & (POLLERR | POLLHUP | POLLRDHUP | (connected_ ? POLLIN : 0));
    if (ended) {
      verdict_ = broken(socket_error());
    } else if (p.revents & POLLOUT) {
      connected_ = true;
    } else if (!connected_ && std::chrono::steady_clock::now() - started_ > timeout_) {
      verdict_ = broken(ETIMEDOUT);
    }
    if (verdict_.empty()) return std::nullopt;
    return who_ + " " + verdict_;
  }

 private:
  // The connection's pending error, or what reading it says (0: the peer closed).
  int socket_error() const {
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err != 0) return err;
    char byte;
    const ssize_t n = ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 ? errno : 0;
  }
  std::string broken(int err) const {
    const std::string seconds = std::to_string(timeout_.count());
    switch (err) {
      case 0:
      case ECONNRESET:
      case ECONNREFUSED:
      case EPIPE:
        return "has died: its host closed onesided's liveness connection to it (" + where_ + ", " +
               (err ? std::strerror(err) : "end of stream") + "), so its process exited";
      default:
        return "is unreachable: its host answered no TCP keepalive to " + where_ + " for " + seconds + " s (" +
               std::strerror(err) + "): the host, or the link to it, is down";
    }
  }

  const std::string who_, where_;
  const std::chrono::seconds timeout_;
  const std::chrono::steady_clock::time_point started_;
  int fd_ = -1;
  mutable std::mutex mutex_;      // guards what follows
  mutable bool connected_ = false;
  mutable std::string verdict_;  // empty while alive
};

}  // namespace

std::chrono::seconds peer_timeout() {
  const char* text = std::getenv("ONESIDED_PEER_TIMEOUT");
  if (!text || !*text) return std::chrono::seconds(3);
  char* end = nullptr;
  const long s = std::strtol(text, &end, 10);
  if (*end || s < 2 || s > 3600)
    raise(ErrorCategory::Argument,
          std::string("ONESIDED_PEER_TIMEOUT=") + text + " is not a whole number of seconds in [2, 3600]");
  return std::chrono::seconds(s);
}

std::uint16_t liveness_port() {
  Listener& l = listener();
  std::lock_guard lk(l.mutex);
  if (!l.opened) {
    l.opened = true;
    l.fd = open_listener(l.port);
  }
  accept_pending(l);
  return l.port;
}

std::shared_ptr<const LifeSign> watch_process(pid_t pid) { return std::make_shared<ProcessWatch>(pid); }

std::shared_ptr<const LifeSign> watch_link(const std::string& host, const std::string& ip, std::uint16_t port,
                                           std::int64_t pid) {
  if (ip.empty() || port == 0) return nullptr;
  static std::mutex mutex;
  // By listener and pid: a later process may get a dead one's port.
  static auto* links = new std::map<std::string, std::weak_ptr<const LifeSign>>;
  const std::string where = (ip.find(':') != std::string::npos ? "[" + ip + "]" : ip) + ":" + std::to_string(port);
  const std::string key = where + " " + std::to_string(pid);
  std::lock_guard lk(mutex);
  std::erase_if(*links, [](const auto& entry) { return entry.second.expired(); });  // windows freed
  if (auto known = (*links)[key].lock()) return known;
  auto link = std::make_shared<LinkWatch>("(pid " + std::to_string(pid) + " on host " + host + ")", where,
                                          peer_timeout());
  if (!link->connect(ip, port)) return nullptr;
  (*links)[key] = link;
  return link;
}

}  // namespace onesided::detail
