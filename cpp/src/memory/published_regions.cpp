// Attached regions in shared memory; the invariants are in
// published_regions.hpp.
#include "memory/published_regions.hpp"

#include <sched.h>
#include <time.h>

#include "onesided/error.hpp"

namespace onesided::detail {
namespace {

// A short pause for a waiter: spin first, then give the core away (a
// writer or reader it waits for may be waiting for it), then sleep a
// little (ranks may outnumber cores).
void pause_for(unsigned round) {
  if (round < 64) return;
  if (round < 1024) {
    sched_yield();
    return;
  }
  timespec t{0, 50'000};
  nanosleep(&t, nullptr);
}

}  // namespace

// A page per rank: its head, its entries, then one reader count per origin.
std::size_t PublishedRegions::page_bytes(int nranks) {
  return sizeof(Head) + kCapacity * sizeof(Entry) + static_cast<std::size_t>(nranks) * sizeof(Readers);
}

std::size_t PublishedRegions::bytes(int nranks) { return static_cast<std::size_t>(nranks) * page_bytes(nranks); }

PublishedRegions::PublishedRegions(std::byte* at, int nranks, int rank, std::shared_ptr<void> mapping)
    : at_(at), nranks_(nranks), rank_(rank), mapping_(std::move(mapping)) {
  static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "tables in shared memory need lock-free words");
  static_assert(sizeof(Head) % alignof(Readers) == 0 && (kCapacity * sizeof(Entry)) % alignof(Readers) == 0);
}

PublishedRegions::Head& PublishedRegions::head(int rank) const {
  return *reinterpret_cast<Head*>(at_ + static_cast<std::size_t>(rank) * page_bytes(nranks_));
}

PublishedRegions::Entry* PublishedRegions::entries(int rank) const {
  return reinterpret_cast<Entry*>(reinterpret_cast<std::byte*>(&head(rank)) + sizeof(Head));
}

PublishedRegions::Readers& PublishedRegions::readers(int rank, int origin) const {
  auto* first = reinterpret_cast<Readers*>(reinterpret_cast<std::byte*>(entries(rank)) + kCapacity * sizeof(Entry));
  return first[origin];
}

// ---- the writer: this rank, serialised by its caller ------------------------

void PublishedRegions::write(const RegionTable& mine) {
  const auto& regions = mine.regions();
  if (regions.size() > kCapacity)
    raise(ErrorCategory::Internal, "published region table overflow (Attach checks the capacity)");
  Head& h = head(rank_);
  const std::uint64_t v = h.version.load(std::memory_order_relaxed);  // only this rank writes it
  h.version.store(v + 1, std::memory_order_seq_cst);
  Entry* e = entries(rank_);
  // Release stores: a reader that loads any of them sees the odd version
  // (or a later one) when it checks again.
  for (std::size_t i = 0; i < regions.size(); ++i) {
    e[i].base.store(regions[i].base, std::memory_order_release);
    e[i].len.store(regions[i].len, std::memory_order_release);
  }
  h.count.store(regions.size(), std::memory_order_release);
  h.version.store(v + 2, std::memory_order_seq_cst);
}

void PublishedRegions::publish(const RegionTable& mine, const std::function<bool(int)>& gone) {
  const std::uint64_t before = head(rank_).version.load(std::memory_order_relaxed);  // only this rank writes it
  write(mine);
  // Every reader that checked the old table counted itself in the old
  // version's parity before it checked; later ones count in the other one.
  // (The write before this one waited for that other parity, so nobody who
  // checked an older table is left in it.)
  const int old = static_cast<int>((before >> 1) & 1);
  for (int o = 0; o < nranks_; ++o) {
    if (o == rank_) continue;
    auto& count = readers(rank_, o).parity[old];
    for (unsigned round = 0; count.load(std::memory_order_seq_cst) != 0; ++round) {
      if (round % 1024 == 1023 && gone(o)) break;  // a dead origin never leaves, and copies nothing more
      pause_for(round);
    }
  }
}

// ---- the readers: any origin -------------------------------------------------

std::uint64_t PublishedRegions::settled(int target, const std::function<void()>& check) const {
  for (unsigned round = 0;; ++round) {
    const std::uint64_t v = head(target).version.load(std::memory_order_seq_cst);
    if ((v & 1) == 0) return v;
    if (round % 1024 == 1023 && check) check();  // a target that died mid-change never finishes it
    pause_for(round);
  }
}

std::vector<AttachedRegion> PublishedRegions::cover(int target, std::uint64_t addr, std::uint64_t len,
                                                    const std::function<void()>& check) const {
  const Head& h = head(target);
  const Entry* e = entries(target);
  auto region = [e](std::size_t i) {
    return std::pair{e[i].base.load(std::memory_order_acquire), e[i].len.load(std::memory_order_acquire)};
  };
  for (;;) {
    const std::uint64_t v = settled(target, check);
    const std::size_t n = std::min<std::uint64_t>(h.count.load(std::memory_order_acquire), kCapacity);
    const auto [first, count] = covering(n, region, addr, len);
    std::vector<AttachedRegion> out;
    for (std::size_t i = first; i < first + count; ++i) {
      const auto [base, size] = region(i);
      out.push_back({base, size, {}});
    }
    if (h.version.load(std::memory_order_seq_cst) == v) return out;
  }
}

PublishedRegions::Hold PublishedRegions::hold(int target, std::span<const Range> ranges,
                                              const std::function<void()>& check) const {
  const Head& h = head(target);
  const Entry* e = entries(target);
  auto region = [e](std::size_t i) {
    return std::pair{e[i].base.load(std::memory_order_acquire), e[i].len.load(std::memory_order_acquire)};
  };
  for (;;) {
    const std::uint64_t v = settled(target, check);
    auto& count = readers(target, rank_).parity[(v >> 1) & 1];
    count.fetch_add(1, std::memory_order_seq_cst);  // counted in before the check (see publish)
    const std::size_t n = std::min<std::uint64_t>(h.count.load(std::memory_order_acquire), kCapacity);
    // Attached, whether by one region or by several side by side (a put
    // across them, staged as one piece).
    bool inside = true;
    for (const Range& r : ranges) inside = inside && covering(n, region, r.addr, r.len).second != 0;
    if (h.version.load(std::memory_order_seq_cst) == v) {
      if (inside) return Hold(&count);
      count.fetch_sub(1, std::memory_order_release);
      return {};
    }
    count.fetch_sub(1, std::memory_order_release);
  }
}

}  // namespace onesided::detail
