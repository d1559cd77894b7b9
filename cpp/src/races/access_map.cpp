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
    if (e.origin == a.origin && e.kind == a.kind && e.dtype == a.dtype) {
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

}  // namespace onesided::detail
