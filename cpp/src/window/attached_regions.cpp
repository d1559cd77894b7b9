// Addressing on dynamic windows (Create_dynamic): a displacement is an
// absolute address inside a region the target attached.
//
// Who writes what, all under mutex_: this rank's regions (Attach/Detach,
// any local thread; read by the progress thread answering Regions), and
// the origin-side copies of every target's table with their stale flags
// (refreshed at every epoch start and on a miss, by a round trip to the
// target's progress engine).
#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <vector>

#include "memory/region_table.hpp"
#include "onesided/interrupt.hpp"
#include "window/addressing.hpp"

namespace onesided::detail {
namespace {

class AttachedRegions final : public Addressing {
 public:
  explicit AttachedRegions(WindowState& s)
      : s_(s), remote_(static_cast<std::size_t>(s.nranks)), stale_(static_cast<std::size_t>(s.nranks), 1) {}

  Where locate(int target, std::int64_t disp, std::int64_t shift, std::size_t bytes) override {
    const auto addr = address(disp, shift, bytes);
    const auto regions = cover(target, addr, bytes);
    if (regions.size() != 1) outside(target, addr, bytes, !regions.empty());
    return place(target, regions.front(), addr);
  }

  void pieces(int target, std::int64_t disp, std::size_t bytes, std::size_t unit, PieceSink sink,
              void* context) override {
    const auto addr = address(disp, 0, bytes);
    const auto regions = cover(target, addr, bytes);
    if (regions.empty()) outside(target, addr, bytes, false);
    for (std::size_t k = 1; k < regions.size(); ++k)
      if ((regions[k].base - addr) % unit)
        raise(ErrorCategory::Bounds, "target range crosses attached regions inside an element (at address " +
                                         std::to_string(regions[k].base) + "): an element must lie in one region");
    std::uint64_t at = addr;
    for (const auto& r : regions) {
      const std::uint64_t n = std::min<std::uint64_t>(addr + bytes - at, r.base + r.len - at);
      sink(context, place(target, r, at), static_cast<std::size_t>(at - addr), static_cast<std::size_t>(n));
      at += n;
    }
  }

  std::byte* local(std::uint64_t at, std::size_t bytes) override {
    std::lock_guard lk(mutex_);
    return local_.find(at, bytes) ? reinterpret_cast<std::byte*>(at) : nullptr;
  }

  void epoch_started() override {
    std::lock_guard lk(mutex_);
    std::fill(stale_.begin(), stale_.end(), 1);
  }

  void attach(void* base, std::size_t size) override {
    if (!base && size) raise(ErrorCategory::Argument, "Attach: memory is null");
    auto mr = s_.endpoint->transport().register_region(base, size);
    const auto addr = reinterpret_cast<std::uint64_t>(base);
    std::lock_guard lk(mutex_);
    local_.add({addr, size, mr->remote()});
    registered_[addr] = std::move(mr);
  }

  void detach(const void* base) override {
    const auto addr = reinterpret_cast<std::uint64_t>(base);
    std::lock_guard lk(mutex_);
    if (!local_.remove(addr)) raise(ErrorCategory::Argument, "Detach: this memory is not attached to the window");
    registered_.erase(addr);
  }

  void on_message(const Header& h, const std::byte* payload, std::size_t len) override {
    if (h.kind == MsgKind::RegionsReply) {
      auto* reply = reinterpret_cast<Reply*>(h.token);
      reply->bytes.assign(reinterpret_cast<const char*>(payload), len);
      reply->done.store(1, std::memory_order_release);
      return;
    }
    std::string table;
    {
      std::lock_guard lk(mutex_);
      table = local_.bytes();
    }
    const int origin = static_cast<int>(h.origin);
    s_.send(origin, s_.header(MsgKind::RegionsReply, origin, h.token), table.data(), table.size());
  }

  void release() override {
    std::lock_guard lk(mutex_);
    registered_.clear();
  }

 private:
  // disp is an absolute address (an unsigned one, as MPI_Aint carries it).
  static std::uint64_t address(std::int64_t disp, std::int64_t shift, std::size_t bytes) {
    const auto at = static_cast<__int128>(static_cast<std::uint64_t>(disp)) + shift;
    if (at < 0 || at + static_cast<__int128>(bytes) > static_cast<__int128>(UINT64_MAX))
      raise(ErrorCategory::Bounds, "target range out of window: address " + std::to_string(disp) + " + " +
                                       std::to_string(shift) + " is outside the address space");
    return static_cast<std::uint64_t>(at);
  }

  Where place(int target, const AttachedRegion& r, std::uint64_t addr) const {
    return {target, r.remote, addr - r.base, addr, target == s_.rank ? reinterpret_cast<std::byte*>(addr) : nullptr};
  }

  // The regions of `target` that hold [addr, addr + bytes) (see
  // RegionTable::cover); this rank's own table, or the origin's copy of the
  // target's, fetched again when stale or when it misses.
  std::vector<AttachedRegion> cover(int target, std::uint64_t addr, std::size_t bytes) {
    if (target == s_.rank) {
      std::lock_guard lk(mutex_);
      return local_.cover(addr, bytes);
    }
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (attempt == 1) refresh(target);
      std::unique_lock lk(mutex_);
      if (stale_[target]) {
        lk.unlock();
        refresh(target);
        lk.lock();
      }
      auto regions = remote_[target].cover(addr, bytes);
      if (!regions.empty()) return regions;
    }
    return {};
  }

  [[noreturn]] static void outside(int target, std::uint64_t addr, std::size_t bytes, bool crosses) {
    raise(ErrorCategory::Bounds,
          "target range out of window: address " + std::to_string(addr) + " + " + std::to_string(bytes) +
              (crosses ? " bytes crosses regions rank " + std::to_string(target) +
                             " attached side by side, which only a contiguous Put, Get or accumulate-style call "
                             "of whole elements may do (not a strided or derived-datatype target)"
                       : " bytes is not inside memory rank " + std::to_string(target) +
                             " has attached to the dynamic window"));
  }

  struct Reply {
    std::atomic<int> done{0};
    std::string bytes;
  };

  // Asks `target` for its attached regions.
  // Not interrupted: the reply lands in this frame. It is one round trip
  // to the target's progress engine, which answers without its user.
  void refresh(int target) {
    InterruptsDeferred uninterrupted;
    Reply reply;
    s_.send(target, s_.header(MsgKind::Regions, target, reinterpret_cast<std::uint64_t>(&reply)));
    s_.wait([&] { return reply.done.load(std::memory_order_acquire) != 0; });
    auto table = RegionTable::from_bytes(reply.bytes);
    std::lock_guard lk(mutex_);
    remote_[target] = std::move(table);
    stale_[target] = 0;
  }

  WindowState& s_;
  std::mutex mutex_;
  RegionTable local_;
  std::map<std::uint64_t, std::unique_ptr<LocalRegion>> registered_;
  std::vector<RegionTable> remote_;
  std::vector<std::uint8_t> stale_;
};

}  // namespace

std::unique_ptr<Addressing> attached_regions(WindowState& state) { return std::make_unique<AttachedRegions>(state); }

}  // namespace onesided::detail
