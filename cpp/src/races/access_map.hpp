// The byte ranges of one target touched in the current synchronisation
// interval, as an interval map: disjoint segments keyed by their first
// byte, each holding the accesses that cover it. Finding the accesses that
// overlap a new one costs O(log n + k) (n segments, k overlapped);
// inserting splits at most two segments.
//
// Invariants: segments never overlap and never are empty; a segment keeps
// one access per (origin, kind, dtype, request), the latest completed, so a
// counter hit a million times by two origins keeps two entries, not a
// million. An access awaiting its Request (RaceAccess::request) is kept on
// its own, so taking it out at its Wait never takes an older one with it. The
// first conflict found is enough to report: the checker names one pair per
// range, not every pair.
//
// Not thread-safe: its owner (races/race_log.hpp) holds the lock.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "races/race_access.hpp"

namespace onesided::detail {

class AccessMap {
 public:
  // The first access overlapping `a` that conflicts with it and that
  // `concurrent(earlier, a)` says nothing orders; null if none.
  template <class Concurrent>
  const RaceAccess* find_conflict(const RaceAccess& a, Concurrent&& concurrent) const {
    auto it = segments_.upper_bound(a.lo);
    if (it != segments_.begin()) --it;
    for (; it != segments_.end() && it->first < a.hi; ++it) {
      if (it->second.hi <= a.lo) continue;
      for (const RaceAccess& e : it->second.accesses)
        if (conflict(e, a) && concurrent(e, a)) return &e;
    }
    return nullptr;
  }

  void insert(const RaceAccess& a);
  // Takes out the access awaiting request id `request`, which covers
  // [lo, hi), from every segment it is in (a segment left empty goes too);
  // nothing when it is not there (a flush took it first).
  std::optional<RaceAccess> take_request(std::uint32_t request, std::uint64_t lo, std::uint64_t hi);
  // Every access kept, once per segment it covers.
  template <class F>
  void for_each(F&& f) const {
    for (const auto& [lo, s] : segments_)
      for (const RaceAccess& a : s.accesses) f(a);
  }
  void clear() { segments_.clear(); }
  bool empty() const { return segments_.empty(); }
  std::size_t segments() const { return segments_.size(); }

 private:
  struct Segment {
    std::uint64_t hi;
    std::vector<RaceAccess> accesses;
  };
  // Cuts the segment that strictly contains `at` in two at `at`.
  void split_at(std::uint64_t at);
  static void add(Segment& s, const RaceAccess& a);

  std::map<std::uint64_t, Segment> segments_;
};

}  // namespace onesided::detail
