// What every concern of a window shares: the group, the local memory, the
// peer table, the endpoint and the decisions made at creation.
//
// Who writes what: everything in WindowState is written by the creating
// thread while the window is being made (window/create.cpp) and only read
// afterwards, by any thread, without a lock; the last creation round is a
// barrier that no rank passes before every rank has filled in its peer
// table, so handlers never see a half-filled one. The exceptions are the
// atomics marked below. State that changes after creation belongs to the
// concern that changes it (epochs, locks, in-flight operations, regions),
// with its own lock.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "atomics/atomic_plan.hpp"
#include "transport/doorbell.hpp"
#include "transport/endpoint.hpp"
#include "onesided/error.hpp"
#include "onesided/window.hpp"
#include "atomics/op_set.hpp"
#include "order/order_tracker.hpp"
#include "order/ordering.hpp"
#include "transport/protocol.hpp"
#include "window/peer_watch.hpp"
#include "memory/publication.hpp"
#include "memory/shared_segment.hpp"

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
};

struct WindowState {
  std::shared_ptr<Bootstrap> group;
  int rank = 0;
  int nranks = 0;
  std::byte* base = nullptr;
  std::size_t size = 0;
  int disp_unit = 1;
  Flavor flavor = Flavor::Create;
  std::unique_ptr<std::byte[]> owned;       // Allocate's memory off the shared-memory path
  std::shared_ptr<SharedSegment> shared;    // Allocate_shared's memory, or the shared-memory path's

  std::string provider;
  std::shared_ptr<Endpoint> endpoint;
  std::unique_ptr<LocalRegion> region;      // this rank's memory, registered (not Dynamic)
  std::uint32_t id = 0;                     // this window at the endpoint
  std::vector<Peer> peers;
  bool same_host = false;                   // every rank of the group on this host
  bool shared_memory_path = false;          // the path chosen; for the report only

  OpSet declared = OpSet::all();
  Ordering ordering;
  std::uint64_t accumulate_granularity = 0;  // info mpi_accumulate_granularity (config.hpp)
  // Notified RMA: counters per rank (info onesided_notifications). On the
  // shared-memory path every rank's are in the shared mapping, rank r's at
  // shared_notify + r * notifications; elsewhere each rank keeps its own.
  std::size_t notifications = 0;
  std::atomic<std::uint64_t>* shared_notify = nullptr;
  AtomicPlan plan;
  OrderRule rule;
  // Plain stores into memory other processes map are published and taken
  // through it (memory/publication.hpp); set at creation like the rest.
  Publication publication;

  // Set by free() (any thread); every call checks it first.
  std::atomic<bool> freed{false};
  // The first rank found dead while this rank waited for it (-1: none);
  // written once by the waiting thread that found it. The window is then
  // dead: every call raises.
  mutable std::atomic<int> dead_rank{-1};

  void check_live() const {
    if (freed.load(std::memory_order_acquire)) raise(ErrorCategory::Epoch, "the window has been freed");
    if (endpoint && endpoint->progress().forked()) raise_forked("the window");
    if (const int r = dead_rank.load(std::memory_order_acquire); r >= 0) raise_dead(r);
  }
  // This thread sees what this process's progress delivered (synchronisation
  // calls end with it; see ProgressEngine::observe).
  void observe() const { endpoint->progress().observe(); }
  // On one host, a peer's death is seen from its pid: raises a Transport
  // error naming the first dead rank. Elsewhere the transport reports it.
  void check_peers() const;
  [[noreturn]] void raise_dead(int r) const;
  // The pid a wait for `target` alone watches (a Request's): another
  // process on this host, else 0 (nothing to watch).
  std::int64_t watched_pid(int target) const {
    return same_host && target >= 0 && target < nranks && target != rank ? peers[target].pid : 0;
  }

  // Polls progress until done() holds, watching the peers every 100 ms,
  // so a wait for a rank that died ends in an error instead of never.
  template <class Pred>
  void wait(Pred&& done) const {
    if (!same_host) return endpoint->progress().wait(done);
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
