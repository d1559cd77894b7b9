// The regions each rank has attached to a dynamic window, published in
// shared memory every rank maps (the window's lock segment), so that on one
// host an origin checks a target address itself and then copies by
// cross-memory attach: no round trip to the target per epoch or per miss,
// and no progress at the target (the provider path fetches tables by
// message instead: window/attached_regions.cpp).
//
// Invariants:
//  - Who writes: rank t's table (version, count, entries) only by rank t,
//    in Attach and Detach, which the caller serialises (one writer per
//    table); the reader counts readers[o][*] of rank t's page only by origin
//    o, around each access to rank t's memory. Everyone reads everything.
//  - The table is a sequence lock: the version is odd while it changes, and
//    a reader that saw an odd version, or a different version after reading
//    the entries, reads again. Entries are atomics (acquire loads, release
//    stores), so a reader that saw any new entry sees the version move on.
//  - What a Detach promises: when publish() returns, no origin touches
//    memory the new table lacks any more, and none will. An origin adds
//    itself to the reader count of the version's parity before it checks
//    the table and leaves after its copy; publish() moves the version on
//    (new readers count in the other parity, and see the new table) and
//    waits until the old parity's count is zero at every origin still alive
//    (sequentially consistent: either the writer sees the reader's count,
//    or the reader sees the new version and checks again). Attach waits
//    too, though it removes nothing: so that when the next Detach begins,
//    only readers of the current version can be in a copy, all counted in
//    one parity.
//  - A reader holds its count for one copy, never across user code, so a
//    Detach waits at most for the copies in flight (an origin stopped in
//    one holds it up, as it would hold up a lock).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "memory/region_table.hpp"

namespace onesided::detail {

class PublishedRegions {
 public:
  // The most regions a rank may have attached to one dynamic window at a
  // time, on every path (Attach raises beyond it): a published table has
  // room for this many.
  static constexpr std::size_t kCapacity = 1024;
  // The bytes every rank's table takes in the shared mapping, together.
  static std::size_t bytes(int nranks);

  // `at`: bytes(nranks) zeroed bytes in `mapping` (kept mapped by this).
  PublishedRegions(std::byte* at, int nranks, int rank, std::shared_ptr<void> mapping);

  // This rank's table is now `mine` (after an Attach or a Detach): origins
  // check against it from now on, and every copy that checked an older
  // one has ended when this returns (`gone(o)`: origin o died, and will
  // never leave). Not interrupted: it waits for copies in flight only.
  void publish(const RegionTable& mine, const std::function<bool(int)>& gone);

  // The regions of `target` that together hold [addr, addr + len), as
  // RegionTable::cover (their `remote` left empty: the cross-memory path
  // never asks the provider). `check` runs while a writer at the target
  // seems stuck and may raise (a target that died in Attach).
  std::vector<AttachedRegion> cover(int target, std::uint64_t addr, std::uint64_t len,
                                    const std::function<void()>& check) const;

  // An origin's access to [addr, addr + len) at a target, counted in for
  // its life: while it lives, no Detach at the target returns. Empty (false)
  // when a byte of the range is not in a region the target has attached.
  class Hold {
   public:
    Hold() = default;
    explicit Hold(std::atomic<std::uint64_t>* count) : count_(count) {}
    Hold(Hold&& o) noexcept : count_(std::exchange(o.count_, nullptr)) {}
    Hold& operator=(Hold&&) = delete;
    ~Hold() {
      if (count_) count_->fetch_sub(1, std::memory_order_release);
    }
    explicit operator bool() const { return count_ != nullptr; }

   private:
    std::atomic<std::uint64_t>* count_ = nullptr;
  };
  // The same for several ranges at once (the pieces of one copy), each
  // inside one region: one count, one check of the table.
  struct Range {
    std::uint64_t addr, len;
  };
  Hold hold(int target, std::span<const Range> ranges, const std::function<void()>& check) const;
  Hold hold(int target, std::uint64_t addr, std::uint64_t len, const std::function<void()>& check) const {
    const Range one{addr, len};
    return hold(target, std::span<const Range>(&one, 1), check);
  }

 private:
  struct Entry {
    std::atomic<std::uint64_t> base, len;
  };
  struct alignas(64) Head {
    std::atomic<std::uint64_t> version;  // odd while the table changes
    std::atomic<std::uint64_t> count;    // entries in use, sorted by base
  };
  struct alignas(64) Readers {
    std::atomic<std::uint64_t> parity[2];  // one origin's accesses in flight, by the version's parity
  };
  static std::size_t page_bytes(int nranks);
  Head& head(int rank) const;
  Entry* entries(int rank) const;
  Readers& readers(int rank, int origin) const;
  // A version that is not being changed (even), spinning while it is.
  std::uint64_t settled(int target, const std::function<void()>& check) const;
  void write(const RegionTable& mine);

  std::byte* at_;
  int nranks_, rank_;
  std::shared_ptr<void> mapping_;
};

}  // namespace onesided::detail
