#include "races/race_log.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>
#include <tuple>

#include "onesided/races.hpp"

namespace onesided::detail {
namespace {

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// A call site's text travels with the accesses, cut to this length.
constexpr std::size_t kSiteTextMax = 200;

template <class T>
void append(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

template <class T>
bool take_from(const std::byte*& p, const std::byte* end, T& v) {
  if (static_cast<std::size_t>(end - p) < sizeof v) return false;
  std::memcpy(&v, p, sizeof v);
  p += sizeof v;
  return true;
}

}  // namespace

RaceLog::RaceLog(WindowState& s, bool raise_errors)
    : s_(s),
      raise_errors_(raise_errors),
      epoch_(static_cast<std::size_t>(s.nranks), EpochKind::None),
      unflushed_(static_cast<std::size_t>(s.nranks)),
      kept_(static_cast<std::size_t>(s.nranks)) {}

RaceAccess RaceLog::record(RaceAccess a, bool awaits_request) {
  // The call site first, outside the lock: the hook may take the GIL.
  a.site = races::hooks().site();
  a.origin = s_.rank;
  a.issued = now_ns();
  std::lock_guard lk(mutex_);
  const auto t = static_cast<std::size_t>(a.target);
  a.epoch = epoch_[t];
  // This rank's own accesses to the target not yet completed are
  // concurrent with this one, whatever the epoch.
  if (const RaceAccess* e = unflushed_[t].find_conflict(a, [](const RaceAccess&, const RaceAccess&) { return true; })) {
    found_locked({*e, a});
  }
  if (awaits_request) {
    // Wraps after 4G requests: an id then repeats only if a request that
    // old is still awaited, which a program would not outlive.
    if (++last_request_ == 0) ++last_request_;
    a.request = last_request_;
  }
  unflushed_[t].insert(a);
  return a;
}

void RaceLog::request_completed(const RaceAccess& a, std::uint64_t when) {
  std::lock_guard lk(mutex_);
  const auto t = static_cast<std::size_t>(a.target);
  if (auto done = unflushed_[t].take_request(a.request, a.lo, a.hi)) keep_locked(*done, when);
}

void RaceLog::keep_locked(RaceAccess a, std::uint64_t now) {
  // Exclusive lock epochs are ordered by the lock: nothing to keep.
  if (a.epoch == EpochKind::LockExclusive) return;
  a.completed = now;
  a.request = 0;  // complete: kept like any other (one per origin, kind, dtype)
  kept_[static_cast<std::size_t>(a.target)].insert(a);
}

void RaceLog::buffer_changed(const RaceAccess& a) {
  std::lock_guard lk(mutex_);
  found_locked({a, a, true});
}

void RaceLog::found_locked(const Finding& f) {
  ++total_;
  if (!told_.emplace(f.earlier.origin, f.earlier.site, f.later.origin, f.later.site, f.buffer).second) return;
  findings_.push_back(f);
  pending_.store(true, std::memory_order_release);
}

void RaceLog::flushed(int target) {
  const std::uint64_t now = now_ns();
  std::lock_guard lk(mutex_);
  for (int t = 0; t < s_.nranks; ++t) {
    if (target >= 0 && t != target) continue;
    unflushed_[t].for_each([&](const RaceAccess& a) { keep_locked(a, now); });
    unflushed_[t].clear();
  }
}

std::vector<RaceAccess> RaceLog::take(int target) {
  std::lock_guard lk(mutex_);
  std::vector<RaceAccess> out;
  for (int t = 0; t < s_.nranks; ++t) {
    if (target >= 0 && t != target) continue;
    // An access that covers several segments is in each: shipped once.
    std::set<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::uint32_t>> seen;
    kept_[t].for_each([&](const RaceAccess& a) {
      if (seen.emplace(a.lo, a.hi, a.issued, a.site).second) out.push_back(a);
    });
    kept_[t].clear();
    unflushed_[t].clear();
  }
  return out;
}

// Layout: u32 count, the accesses as they are in memory (every rank runs
// the same build), u32 sites, then per site u32 id, u32 length, its text.
std::string RaceLog::encode(const std::vector<RaceAccess>& accesses, std::size_t from, std::size_t to) {
  std::string out;
  append(out, static_cast<std::uint32_t>(to - from));
  std::set<std::uint32_t> sites;
  for (std::size_t i = from; i < to; ++i) {
    append(out, accesses[i]);
    sites.insert(accesses[i].site);
  }
  append(out, static_cast<std::uint32_t>(sites.size()));
  for (std::uint32_t site : sites) {
    std::string text = races::hooks().site_text(site).substr(0, kSiteTextMax);
    append(out, site);
    append(out, static_cast<std::uint32_t>(text.size()));
    out += text;
  }
  return out;
}

void RaceLog::decode_locked(int origin, const std::byte* p, std::size_t len, std::vector<RaceAccess>& out) {
  const std::byte* end = p + len;
  std::uint32_t n = 0, nsites = 0;
  if (!take_from(p, end, n)) return;
  for (std::uint32_t i = 0; i < n; ++i) {
    RaceAccess a;
    if (!take_from(p, end, a)) return;
    out.push_back(a);
  }
  if (!take_from(p, end, nsites)) return;
  for (std::uint32_t i = 0; i < nsites; ++i) {
    std::uint32_t site = 0, size = 0;
    if (!take_from(p, end, site) || !take_from(p, end, size) || static_cast<std::size_t>(end - p) < size) return;
    sites_[{origin, site}] = std::string(reinterpret_cast<const char*>(p), size);
    p += size;
  }
}

void RaceLog::check_locked(const RaceAccess& a, AccessMap& map, bool timed) {
  // Another origin's access; with `timed`, only while both were in flight.
  auto concurrent = [timed](const RaceAccess& e, const RaceAccess& x) {
    return e.origin != x.origin && (!timed || (e.issued < x.completed && x.issued < e.completed));
  };
  if (const RaceAccess* e = map.find_conflict(a, concurrent)) {
    found_locked({*e, a});
  }
  map.insert(a);
}

void RaceLog::absorb_locked(const std::vector<RaceAccess>& accesses) {
  for (const RaceAccess& a : accesses) {
    if (a.target != s_.rank) continue;
    if (a.epoch == EpochKind::Fence || a.epoch == EpochKind::Pscw)
      check_locked(a, active_, false);
    else if (a.epoch == EpochKind::LockShared || a.epoch == EpochKind::LockAll)
      check_locked(a, passive_, true);
  }
}

void RaceLog::ship(int target, const std::vector<RaceAccess>& accesses) {
  if (accesses.empty()) return;
  // Room for the records of one message, leaving a quarter for the sites.
  const std::size_t room = s_.endpoint->transport().max_message_size() - sizeof(Header);
  const std::size_t per = std::max<std::size_t>(1, room * 3 / 4 / sizeof(RaceAccess));
  for (std::size_t from = 0; from < accesses.size(); from += per) {
    const std::size_t to = std::min(accesses.size(), from + per);
    if (target == s_.rank) {
      std::vector<RaceAccess> mine(accesses.begin() + static_cast<std::ptrdiff_t>(from),
                                   accesses.begin() + static_cast<std::ptrdiff_t>(to));
      std::lock_guard lk(mutex_);
      absorb_locked(mine);
      continue;
    }
    const std::string bytes = encode(accesses, from, to);
    s_.send(target, s_.header(MsgKind::Races, target), bytes.data(), bytes.size());
    const std::uint64_t mine = sent_.fetch_add(1, std::memory_order_relaxed) + 1;
    s_.wait([&] { return acked_.load(std::memory_order_acquire) >= mine; });
  }
}

void RaceLog::received(int origin, const std::byte* payload, std::size_t len) {
  std::lock_guard lk(mutex_);
  std::vector<RaceAccess> accesses;
  decode_locked(origin, payload, len, accesses);
  absorb_locked(accesses);
}

void RaceLog::fencing() {
  const std::string mine = [&] {
    auto all = take(-1);
    return encode(all, 0, all.size());
  }();
  const auto every = s_.group->allgather(mine);
  std::lock_guard lk(mutex_);
  for (int r = 0; r < s_.nranks; ++r) {
    std::vector<RaceAccess> accesses;
    const auto& b = every[static_cast<std::size_t>(r)];
    decode_locked(r, reinterpret_cast<const std::byte*>(b.data()), b.size(), accesses);
    absorb_locked(accesses);
  }
  // The fence orders everything before it before everything after it.
  active_.clear();
  passive_.clear();
  std::fill(epoch_.begin(), epoch_.end(), EpochKind::Fence);
}

void RaceLog::started(const std::vector<bool>& group) {
  std::lock_guard lk(mutex_);
  for (std::size_t t = 0; t < group.size(); ++t)
    if (group[t]) epoch_[t] = EpochKind::Pscw;
}

void RaceLog::completing(int target) {
  ship(target, take(target));
  std::lock_guard lk(mutex_);
  epoch_[static_cast<std::size_t>(target)] = EpochKind::None;
}

void RaceLog::exposure_ended() {
  std::lock_guard lk(mutex_);
  active_.clear();
  passive_.clear();
}

void RaceLog::locked(int target, bool exclusive) {
  std::lock_guard lk(mutex_);
  epoch_[static_cast<std::size_t>(target)] = exclusive ? EpochKind::LockExclusive : EpochKind::LockShared;
}

void RaceLog::locked_all() {
  std::lock_guard lk(mutex_);
  std::fill(epoch_.begin(), epoch_.end(), EpochKind::LockAll);
}

void RaceLog::unlocking(int target) {
  flushed(target);
  ship(target, take(target));
  std::lock_guard lk(mutex_);
  epoch_[static_cast<std::size_t>(target)] = EpochKind::None;
}

void RaceLog::unlocking_all() {
  flushed(-1);
  for (int t = 0; t < s_.nranks; ++t) ship(t, take(t));
  std::lock_guard lk(mutex_);
  std::fill(epoch_.begin(), epoch_.end(), EpochKind::None);
}

std::string RaceLog::site_of(const RaceAccess& a) {
  if (a.origin == s_.rank) return races::hooks().site_text(a.site);
  std::lock_guard lk(mutex_);
  auto it = sites_.find({a.origin, a.site});
  return it == sites_.end() ? "?" : it->second;
}

// One finding as a sentence that names both calls (or the one whose
// origin buffer changed).
std::string RaceLog::describe(const Finding& f) {
  const RaceAccess& a = f.earlier;
  const RaceAccess& b = f.later;
  if (f.buffer)
    return "origin buffer changed before its call completed: " + describe_call(a) + " from rank " +
           std::to_string(a.origin) + " at " + site_of(a) + " to rank " + std::to_string(a.target) + "'s bytes [" +
           std::to_string(a.lo) + ", " + std::to_string(a.hi) + ") (" + describe_epoch(a.epoch) +
           "); the target may receive either value";
  const std::uint64_t lo = std::max(a.lo, b.lo), hi = std::min(a.hi, b.hi);
  auto side = [&](const RaceAccess& x) {
    return describe_call(x) + " from rank " + std::to_string(x.origin) + " at " + site_of(x) + " (" +
           describe_epoch(x.epoch) + ", bytes [" + std::to_string(x.lo) + ", " + std::to_string(x.hi) + "))";
  };
  return "data race on rank " + std::to_string(a.target) + "'s window, bytes [" + std::to_string(lo) + ", " +
         std::to_string(hi) + "): " + side(a) + " and " + side(b) + " conflict, and no synchronisation orders them";
}

void RaceLog::report() {
  if (!pending_.load(std::memory_order_acquire) && !freed_) return;
  std::vector<Finding> found;
  {
    std::lock_guard lk(mutex_);
    found.swap(findings_);
    pending_.store(false, std::memory_order_relaxed);
  }
  std::string all;
  for (const Finding& f : found) {
    if (raise_errors_)
      all += (all.empty() ? "" : "\n") + describe(f);
    else
      races::hooks().warn(describe(f));
  }
  if (!all.empty()) raise(ErrorCategory::Race, all);
  if (freed_ && total_)
    races::hooks().warn("race checker summary: " + std::to_string(total_) + " finding" + (total_ == 1 ? "" : "s") +
                        " on rank " + std::to_string(s_.rank) + " of this window, " + std::to_string(told_.size()) +
                        " distinct pair" + (told_.size() == 1 ? "" : "s") + " of call sites (each told once)");
}

void RaceLog::freeing() {
  // Whatever is still kept (an epoch a Fence opened and Free closes) is
  // checked like a Fence's; report() then tells it, and the summary.
  fencing();
  std::lock_guard lk(mutex_);
  freed_ = true;
}

}  // namespace onesided::detail
