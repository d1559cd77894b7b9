#include "races/access_map.hpp"

#include <algorithm>

namespace onesided::detail {

void AccessMap::split_at(std::uint64_t at) {
  auto it = segments_.upper_bound(at);
  if (it == segments_.begin()) return;
  --it;
  if (it->first >= at || it->second.hi <= at) return;
  Segment tail{it->second.hi, it->second.accesses};
  it->second.hi = at;
  segments_.emplace_hint(std::next(it), at, std::move(tail));
}

void AccessMap::add(Segment& s, const RaceAccess& a) {
  for (RaceAccess& e : s.accesses)
    if (e.origin == a.origin && e.kind == a.kind && e.dtype == a.dtype && e.request == a.request) {
      if (a.completed >= e.completed) e = a;
      return;
    }
  s.accesses.push_back(a);
}

void AccessMap::insert(const RaceAccess& a) {
  if (a.hi <= a.lo) return;
  split_at(a.lo);
  split_at(a.hi);
  std::uint64_t at = a.lo;
  auto it = segments_.lower_bound(a.lo);
  while (at < a.hi) {
    if (it == segments_.end() || it->first > at) {
      // A gap before the next segment (or the end): a new segment of its own.
      const std::uint64_t end = it == segments_.end() ? a.hi : std::min(it->first, a.hi);
      it = std::next(segments_.emplace_hint(it, at, Segment{end, {a}}));
      at = end;
      continue;
    }
    add(it->second, a);
    at = it->second.hi;
    ++it;
  }
}

std::optional<RaceAccess> AccessMap::take_request(std::uint32_t request, std::uint64_t lo, std::uint64_t hi) {
  std::optional<RaceAccess> out;
  auto it = segments_.upper_bound(lo);
  if (it != segments_.begin()) --it;
  while (it != segments_.end() && it->first < hi) {
    auto& accesses = it->second.accesses;
    auto gone = std::remove_if(accesses.begin(), accesses.end(), [&](const RaceAccess& e) {
      if (e.request != request) return false;
      out = e;  // the same access in each segment it covers
      return true;
    });
    accesses.erase(gone, accesses.end());
    it = accesses.empty() ? segments_.erase(it) : std::next(it);
  }
  return out;
}

}  // namespace onesided::detail
