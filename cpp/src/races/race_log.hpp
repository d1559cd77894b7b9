// The race checker of one window (onesided_check=races; docs/checking.md):
// the accesses this rank made as an origin, and the accesses other ranks
// made to this rank's memory, checked against each other when the
// synchronisation that ends their interval brings them together.
//
// Invariants:
//  - Memory touched: none of the window's; its own maps, under mutex_.
//  - As an origin: every access is checked against this rank's accesses to
//    the same target not yet completed by a flush, or, for a read with a
//    Request, by its Wait (put and get are unordered, so this catches a
//    rank racing with itself), then kept
//    until its epoch ends: Fence (all of them, exchanged by one allgather
//    over the window's group), Complete (Races messages to its target,
//    answered before the Complete is sent), Unlock or Unlock_all of a shared lock (one Races message to
//    the target). Exclusive lock epochs are ordered by the lock: their
//    accesses stay local.
//  - As a target: accesses from different origins are checked in the
//    interval map of the epoch kind. Fence and PSCW accesses conflict
//    until the Fence or Wait that ends them (which clears the map); shared
//    lock accesses conflict only if their times overlap, from the call to
//    the flush or Unlock that completed them (one host's steady clock), so
//    a pair ordered by anything at all (a barrier, a message) is never
//    reported.
//  - Findings are queued and told by report() on the user's thread at the
//    end of a synchronisation call or at the next operation.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

#include "races/access_map.hpp"
#include "state/window_state.hpp"
#include "state/epoch_events.hpp"

namespace onesided::detail {

class RaceLog final : public EpochEvents {
 public:
  RaceLog(WindowState& s, bool raise_errors);

  // An access this rank is issuing as an origin (paths/checking_path.cpp);
  // returns it as recorded (origin, call site, epoch filled in, and with
  // `awaits_request` a request id of its own: see request_completed).
  RaceAccess record(RaceAccess a, bool awaits_request = false);
  // The Request of `a` (as record returned it) was seen complete by Wait
  // or Test at `when` (steady clock, ns): a read whose data has reached the
  // origin has happened at the target, so later accesses of this rank are
  // ordered after it, as after a flush. Nothing if a flush or the epoch's
  // end took it first.
  void request_completed(const RaceAccess& a, std::uint64_t when);
  // The origin buffer of `a` changed between its call and its completion.
  void buffer_changed(const RaceAccess& a);
  // flush(target) returned (target < 0: every target).
  void flushed(int target);

  void fencing() override;
  void started(const std::vector<bool>& group) override;
  void completing(int target) override;
  void exposure_ended() override;
  void locked(int target, bool exclusive) override;
  void locked_all() override;
  void unlocking(int target) override;
  void unlocking_all() override;
  void received(int origin, const std::byte* payload, std::size_t len) override;
  void acknowledged() override { acked_.fetch_add(1, std::memory_order_release); }
  void freeing() override;
  void report() override;

 private:
  struct Finding {
    RaceAccess earlier, later;
    bool buffer = false;  // earlier's origin buffer changed (later unused)
  };
  // The kept accesses to `target` (every target when negative), taken.
  std::vector<RaceAccess> take(int target);
  // One of this rank's accesses completed at `now` (by a flush or its
  // Request): kept to ship when the epoch ends.
  void keep_locked(RaceAccess a, std::uint64_t now);
  // Accesses with their call sites' text, as one message's bytes.
  std::string encode(const std::vector<RaceAccess>& accesses, std::size_t from, std::size_t to);
  void decode_locked(int origin, const std::byte* p, std::size_t len, std::vector<RaceAccess>& out);
  void absorb_locked(const std::vector<RaceAccess>& accesses);
  void check_locked(const RaceAccess& a, AccessMap& map, bool timed);
  std::string site_of(const RaceAccess& a);
  // Queues `f` unless the same pair of call sites was found before (a racy
  // loop is told once, not once per iteration).
  void found_locked(const Finding& f);
  std::string describe(const Finding& f);
  // Sends `accesses` to `target` (this rank's own: at once), in messages
  // that fit the transport.
  void ship(int target, const std::vector<RaceAccess>& accesses);

  WindowState& s_;
  const bool raise_errors_;
  std::mutex mutex_;
  std::vector<EpochKind> epoch_;                  // per target: the epoch this rank's accesses are in
  std::vector<AccessMap> unflushed_;              // per target: this rank's accesses since its last flush
  std::vector<AccessMap> kept_;                   // per target: flushed, to ship when the epoch ends
  std::uint32_t last_request_ = 0;                // the last request id given (never 0)
  AccessMap active_, passive_;                    // as a target: Fence/PSCW, shared-lock accesses
  std::map<std::pair<int, std::uint32_t>, std::string> sites_;  // (rank, site) -> "file:line"
  std::vector<Finding> findings_;
  std::atomic<bool> pending_{false};
  // Races messages sent (by the thread ending an epoch) and taken by their
  // targets: ship() returns once its own are taken, so a target has them
  // before any synchronisation that follows (its Wait, Free, a barrier).
  std::atomic<std::uint64_t> sent_{0};
  std::atomic<std::uint64_t> acked_{0};
  std::size_t total_ = 0;  // findings so far, repeats of a pair of call sites included
  std::set<std::tuple<int, std::uint32_t, int, std::uint32_t, bool>> told_;
  bool freed_ = false;     // set by freeing(): report() adds the summary
};

}  // namespace onesided::detail
