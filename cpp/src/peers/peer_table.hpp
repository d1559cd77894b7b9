// What this rank knows of the ranks of one window's group and how it
// reaches them: each peer's address, window and memory, messages to a
// peer's window (header, payload, then its doorbell), and waits that end in
// an error when a peer dies. Below the locks and the data paths, which talk
// to peers through it; WindowState (state/window_state.hpp) is a PeerTable
// plus the window's own decisions.
//
// Who writes what: as for WindowState, every field is written by the
// creating thread while the window is being made and only read afterwards,
// without a lock; dead_rank is the exception.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/remote_region.hpp"
#include "onesided/error.hpp"
#include "peers/liveness.hpp"
#include "peers/peer_watch.hpp"
#include "transport/doorbell.hpp"
#include "transport/endpoint.hpp"
#include "transport/protocol.hpp"

namespace onesided::detail {

// What this rank knows of one rank's window (itself included).
struct Peer {
  PeerAddr addr = 0;        // fabric address
  std::uint32_t window = 0; // its window id at its endpoint
  RemoteRegion region;      // its memory as the provider addresses it
  std::uint64_t size = 0;
  std::int32_t disp_unit = 1;
  std::int64_t pid = 0;     // for cross-memory attach and doorbells on one host
  std::uint64_t base = 0;   // the window's first byte in that process
  BellWord* bell = nullptr; // its doorbell (one host, shm), rung after each post
  std::string host;         // its hostname, for messages
  // Whether its process lives (peers/liveness.hpp): by pid on this host, by
  // a kept TCP connection on another; nullptr for this rank itself.
  std::shared_ptr<const LifeSign> life;
};

struct PeerTable {
  int rank = 0;
  int nranks = 0;
  std::shared_ptr<Endpoint> endpoint;
  std::vector<Peer> peers;
  bool same_host = false;                   // every rank of the group on this host

  // The first rank found dead while this rank waited for it (-1: none);
  // written once by the waiting thread that found it. The window is then
  // dead: every call raises.
  mutable std::atomic<int> dead_rank{-1};

  // Raises a Transport error naming the first dead rank (and, on another
  // host, its host and how it was seen); each peer's LifeSign says.
  void check_peers() const;
  [[noreturn]] void raise_dead(int r) const;
  // What a wait for `target` alone watches (a Request's): nullptr for this
  // rank itself.
  std::shared_ptr<const LifeSign> life_of(int target) const {
    return target >= 0 && target < nranks ? peers[target].life : nullptr;
  }

  // Polls progress until done() holds, watching the peers every 100 ms,
  // so a wait for a rank that died ends in an error instead of never.
  template <class Pred>
  void wait(Pred&& done) const {
    wait_watching(endpoint->progress(), done, [this] { check_peers(); });
  }
  void check_rank(int target) const {
    if (target < 0 || target >= nranks)
      raise(ErrorCategory::Argument, "target rank " + std::to_string(target) +
                                         " is not in the window's group of size " + std::to_string(nranks));
  }

  // A message to `target`'s window: header (see protocol.hpp) and payload,
  // then its doorbell, so an idle target wakes for it.
  void send(int target, const Header& h, const void* payload = nullptr, std::size_t len = 0) const;
  void ring(int target) const {
    if (auto* bell = peers[target].bell) Doorbell::ring(*bell);
  }
  Header header(MsgKind kind, int to, std::uint64_t token = 0, std::uint8_t flags = 0) const {
    return make_header(kind, peers[to].window, rank, token, flags);
  }
};

}  // namespace onesided::detail
