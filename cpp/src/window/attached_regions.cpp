// Addressing on dynamic windows (Create_dynamic): a displacement is an
// absolute address inside a region the target attached.
//
// Who writes what: this rank's regions, under mutex_ (Attach/Detach, any
// local thread; read by the progress thread answering Regions). What this
// rank knows of other ranks' regions is the directory's, chosen at
// creation (region_directory.hpp: fetched by message, or published in
// shared memory on the cross-memory path).
#include <map>
#include <mutex>
#include <vector>

#include "memory/region_table.hpp"
#include "window/addressing.hpp"
#include "window/region_directory.hpp"

namespace onesided::detail {
namespace {

class AttachedRegions final : public Addressing {
 public:
  AttachedRegions(WindowState& s, std::unique_ptr<RegionDirectory> directory)
      : s_(s), directory_(std::move(directory)) {}

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

  void epoch_started() override { directory_->epoch_started(); }

  void attach(void* base, std::size_t size) override {
    if (!base && size) raise(ErrorCategory::Argument, "Attach: memory is null");
    auto mr = s_.endpoint->transport().register_region(base, size);
    const auto addr = reinterpret_cast<std::uint64_t>(base);
    std::lock_guard lk(mutex_);
    if (local_.size() >= PublishedRegions::kCapacity)
      raise(ErrorCategory::Argument, "Attach: this rank has " + std::to_string(local_.size()) +
                                         " regions attached to the window, the most a dynamic window holds per "
                                         "rank; Detach one first");
    local_.add({addr, size, mr->remote()});
    registered_[addr] = std::move(mr);
    directory_->changed(local_);
  }

  // The registration goes only once no origin can be copying into the
  // memory (the directory's changed() returned).
  void detach(const void* base) override {
    const auto addr = reinterpret_cast<std::uint64_t>(base);
    std::lock_guard lk(mutex_);
    if (!local_.remove(addr)) raise(ErrorCategory::Argument, "Detach: this memory is not attached to the window");
    directory_->changed(local_);
    registered_.erase(addr);
  }

  void on_message(const Header& h, const std::byte* payload, std::size_t len) override {
    if (h.kind == MsgKind::RegionsReply) return directory_->reply(h, payload, len);
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
  // RegionTable::cover): this rank's own table, or what the directory
  // knows of the target's.
  std::vector<AttachedRegion> cover(int target, std::uint64_t addr, std::size_t bytes) {
    if (target != s_.rank) return directory_->cover(target, addr, bytes);
    std::lock_guard lk(mutex_);
    return local_.cover(addr, bytes);
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

  WindowState& s_;
  std::unique_ptr<RegionDirectory> directory_;
  std::mutex mutex_;
  RegionTable local_;
  std::map<std::uint64_t, std::unique_ptr<LocalRegion>> registered_;
};

}  // namespace

std::unique_ptr<Addressing> attached_regions(WindowState& state, std::unique_ptr<RegionDirectory> directory) {
  return std::make_unique<AttachedRegions>(state, std::move(directory));
}

}  // namespace onesided::detail
