// No silent network hangs: at creation, every rank reads a probe word from
// every rank on another host, with a bounded wait, before the window is
// used. A provider that published an address its peers cannot reach (the
// interface libfabric picked is host-local, e.g. docker0 with one address
// on every host) then fails creation at every rank with an error naming
// the peer, the address, the interface and FI_TCP_IFACE, instead of
// hanging in the first synchronisation call.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "onesided/bootstrap.hpp"
#include "transport/endpoint.hpp"
#include "transport/transport.hpp"

namespace onesided::detail {

// What a rank publishes so that others can probe it and, if that fails,
// say what they tried.
struct ProbeTarget {
  RemoteRegion region;     // its probe word
  std::string host;        // hostname, for messages
  std::string address;     // its fabric address as text ("10.0.0.2:41234"), or ""
  std::string interface;   // the local interface that carries that address, or ""
};

// This process's probe word, registered with `transport` for the caller's
// lifetime, and what to publish about it.
struct Probe {
  std::unique_ptr<LocalRegion> region;
  ProbeTarget target;
  static Probe open(Transport& transport);
};

// The IP address of a ProbeTarget's address ("10.0.0.2:41234" gives
// "10.0.0.2", "[fe80::1]:7" gives "fe80::1"; "" gives "").
std::string ip_part(const std::string& address);

// How long a rank waits for its probes: ONESIDED_CONNECT_TIMEOUT seconds
// (default 20; 0: no probes; a malformed value raises, naming it).
std::chrono::milliseconds connect_timeout();

// Collective over `group`. Probes every rank r with remote[r] set, through
// `peers[r]`; every rank then raises the same Transport error if any probe
// anywhere failed or timed out, or returns at every rank.
void check_reachable(Bootstrap& group, Endpoint& endpoint, const std::vector<PeerAddr>& peers,
                     const std::vector<ProbeTarget>& targets, const std::vector<bool>& remote,
                     const std::string& provider);

}  // namespace onesided::detail
