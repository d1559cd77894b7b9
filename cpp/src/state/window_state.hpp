// What every concern of a window shares: the group, the local memory, the
// peer table and endpoint (peers/peer_table.hpp), and the decisions made at
// creation. Its own folder, below the data paths and above atomics, order
// and peers, because the paths, the window locks and the window all read it.
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
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "atomics/atomic_plan.hpp"
#include "atomics/op_set.hpp"
#include "memory/publication.hpp"
#include "memory/shared_segment.hpp"
#include "onesided/bootstrap.hpp"
#include "onesided/error.hpp"
#include "onesided/window.hpp"
#include "order/order_tracker.hpp"
#include "order/ordering.hpp"
#include "peers/peer_table.hpp"
#include "transport/transport.hpp"

namespace onesided::detail {

// A PeerTable by inheritance, so the concerns that only talk to peers and
// those that need the whole window use the same names (s.peers, s.send).
struct WindowState : PeerTable {
  std::shared_ptr<Bootstrap> group;
  std::byte* base = nullptr;
  std::size_t size = 0;
  int disp_unit = 1;
  Flavor flavor = Flavor::Create;
  std::unique_ptr<std::byte[]> owned;       // Allocate's memory off the shared-memory path
  std::shared_ptr<SharedSegment> shared;    // Allocate_shared's memory, or the shared-memory path's
  std::shared_ptr<void> exposed_block;      // a Create window's hold on its Alloc_mem block (until release)

  std::string provider;
  std::unique_ptr<LocalRegion> region;      // this rank's memory, registered (not Dynamic)
  std::uint32_t id = 0;                     // this window at the endpoint
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
  void check_live() const {
    if (freed.load(std::memory_order_acquire)) raise(ErrorCategory::Epoch, "the window has been freed");
    if (endpoint && endpoint->progress().forked()) raise_forked("the window");
    if (const int r = dead_rank.load(std::memory_order_acquire); r >= 0) raise_dead(r);
  }
  // This thread sees what this process's progress delivered (synchronisation
  // calls end with it; see ProgressEngine::observe).
  void observe() const { endpoint->progress().observe(); }
};

}  // namespace onesided::detail
