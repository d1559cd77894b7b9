#include "window/reachability.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "memory/host_identity.hpp"
#include "onesided/error.hpp"

namespace onesided::detail {
namespace {

// The IP address (no port) of a socket address, or "".
std::string ip_of(const sockaddr* sa) {
  char text[INET6_ADDRSTRLEN] = {};
  if (sa->sa_family == AF_INET)
    return ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, text, sizeof text) ? text : "";
  if (sa->sa_family == AF_INET6)
    return ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, text, sizeof text) ? text : "";
  return "";
}

// A provider's raw endpoint name as "ip:port" when it is a socket address
// (tcp, and rxm over it, name endpoints so), else "".
std::string address_text(const std::string& raw) {
  sockaddr_storage ss{};
  if (raw.size() < sizeof(sockaddr_in)) return "";
  std::memcpy(&ss, raw.data(), std::min(raw.size(), sizeof ss));
  const auto* sa = reinterpret_cast<const sockaddr*>(&ss);
  if (sa->sa_family == AF_INET)
    return ip_of(sa) + ":" + std::to_string(ntohs(reinterpret_cast<const sockaddr_in*>(sa)->sin_port));
  if (sa->sa_family == AF_INET6 && raw.size() >= sizeof(sockaddr_in6))
    return "[" + ip_of(sa) + "]:" + std::to_string(ntohs(reinterpret_cast<const sockaddr_in6*>(sa)->sin6_port));
  return "";
}


struct Interface {
  std::string name, ip;
};

// This host's interfaces with an IP address.
std::vector<Interface> interfaces() {
  std::vector<Interface> out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return out;
  for (const ifaddrs* i = list; i; i = i->ifa_next)
    if (i->ifa_addr && (i->ifa_addr->sa_family == AF_INET || i->ifa_addr->sa_family == AF_INET6))
      out.push_back({i->ifa_name, ip_of(i->ifa_addr)});
  ::freeifaddrs(list);
  return out;
}

std::string interface_with(const std::string& ip) {
  for (const auto& i : interfaces())
    if (!ip.empty() && i.ip == ip) return i.name;
  return "";
}

// One probe read in flight. Written by whichever thread progresses; read
// by the creating thread after an acquire of `state`.
struct Pending final : Completion {
  std::atomic<int> state{0};  // 0 in flight, 1 done, 2 failed
  std::string error;          // written before state's release store
  std::uint64_t into = 0;
  void complete(const char* e) override {
    if (e) error = e;
    state.store(e ? 2 : 1, std::memory_order_release);
  }
};

std::string seconds(std::chrono::milliseconds d) {
  std::string s = std::to_string(static_cast<double>(d.count()) / 1000.0);
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  return s + " s";
}

// Why rank `me` could not reach rank `r`, with what it knows about both.
std::string describe(int me, int r, const ProbeTarget& mine, const ProbeTarget& theirs, const std::string& how) {
  std::string m = "rank " + std::to_string(me) + " (on " + mine.host + ") " + how + " rank " + std::to_string(r) +
                  " (on " + theirs.host + ")";
  if (!theirs.address.empty()) {
    m += ": rank " + std::to_string(r) + " listens at " + theirs.address;
    if (!theirs.interface.empty()) m += " on its interface " + theirs.interface;
    const std::string local = interface_with(ip_part(theirs.address));
    if (!local.empty())
      m += ", an address " + mine.host + " has too (its " + local + "), so connections to it stay on " + mine.host;
  }
  return m;
}

}  // namespace

Probe Probe::open(Transport& transport) {
  // One word for every window of the process: probes only read it.
  static std::uint64_t word = 0;
  Probe p;
  p.region = transport.register_region(&word, sizeof word);
  p.target.region = p.region->remote();
  p.target.host = host_name();
  p.target.address = address_text(transport.address());
  p.target.interface = interface_with(ip_part(p.target.address));
  return p;
}

std::string ip_part(const std::string& address) {
  if (!address.empty() && address[0] == '[') return address.substr(1, address.find(']') - 1);
  return address.substr(0, address.rfind(':'));
}

std::chrono::milliseconds connect_timeout() {
  const char* text = std::getenv("ONESIDED_CONNECT_TIMEOUT");
  if (!text || !*text) return std::chrono::seconds(20);
  char* end = nullptr;
  const double s = std::strtod(text, &end);
  if (*end || !(s >= 0) || s > 86400)
    raise(ErrorCategory::Argument, std::string("ONESIDED_CONNECT_TIMEOUT=") + text +
                                       " is not a number of seconds in [0, 86400]");
  return std::chrono::milliseconds(static_cast<long long>(s * 1000));
}

void check_reachable(Bootstrap& group, Endpoint& endpoint, const std::vector<PeerAddr>& peers,
                     const std::vector<ProbeTarget>& targets, const std::vector<bool>& remote,
                     const std::string& provider) {
  const int me = group.rank(), n = group.size();
  std::vector<Pending*> pending(static_cast<std::size_t>(n), nullptr);
  std::string verdict;
  std::chrono::milliseconds timeout{0};
  try {
    timeout = connect_timeout();
  } catch (const Error& e) {
    verdict = std::string(" rank ") + std::to_string(me) + ": " + e.what() + ";";  // raised below at every rank
  }
  // 0: this rank does not probe (it still takes part in the verdicts).
  for (int r = 0; r < n && verdict.empty() && timeout.count() > 0; ++r) {
    if (!remote[r]) continue;
    auto* p = new Pending;
    pending[r] = p;
    try {
      endpoint.transport().read(peers[r], &p->into, sizeof p->into, targets[r].region, 0, p);
    } catch (const Error& e) {
      p->complete(e.what());
    }
  }
  const auto settled = [&] {
    for (const Pending* p : pending)
      if (p && p->state.load(std::memory_order_acquire) == 0) return false;
    return true;
  };
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  try {
    endpoint.progress().wait([&] { return settled() || std::chrono::steady_clock::now() >= deadline; });
  } catch (const Error& e) {
    if (e.category() == ErrorCategory::Interrupted) throw;  // the user's, not the fabric's
    verdict += std::string(" rank ") + std::to_string(me) + ": the fabric failed while connecting (" + e.what() + ");";
  }
  for (int r = 0; r < n; ++r) {
    Pending* p = pending[r];
    if (!p) continue;
    const int state = p->state.load(std::memory_order_acquire);
    if (state == 0) {
      // Leaked on purpose: the provider may still complete it.
      verdict += " " + describe(me, r, targets[me], targets[r], "could not reach within " + seconds(timeout)) + ";";
      continue;
    }
    if (state == 2)
      verdict += " " + describe(me, r, targets[me], targets[r], "failed (" + p->error + ") to reach") + ";";
    delete p;
  }
  const auto all = group.allgather(verdict);
  std::string failures;
  for (const auto& v : all) failures += v;
  if (failures.empty()) return;
  std::string have;
  for (const auto& i : interfaces())
    if (i.ip.find(':') == std::string::npos && i.ip.rfind("127.", 0) != 0)
      have += (have.empty() ? "" : ", ") + i.name + " " + i.ip;
  raise(ErrorCategory::Transport,
        "window creation failed: ranks on different hosts cannot reach each other over " + provider + ":" +
            failures.substr(0, failures.size() - 1) +
            ". The provider listens on an interface the other hosts cannot reach: set FI_TCP_IFACE to the "
            "interface that connects the hosts, on every host (" + targets[me].host + " has " +
            (have.empty() ? "no other" : have) +
            "), or choose another provider (FI_PROVIDER, info key provider); ONESIDED_CONNECT_TIMEOUT sets the wait");
}

}  // namespace onesided::detail
