// The two ways an origin learns a target's attached regions
// (region_directory.hpp).
//
// Who writes what: the fetched directory's copies of every target's table
// and their stale flags, under its mutex (refreshed by any thread of this
// rank; RegionsReply lands in the asking thread's frame). The published
// directory keeps nothing of its own: the tables are in shared memory, with
// their own rules (memory/published_regions.hpp).
#include "window/region_directory.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>

#include "onesided/interrupt.hpp"

namespace onesided::detail {
namespace {

class FetchedRegions final : public RegionDirectory {
 public:
  explicit FetchedRegions(WindowState& s)
      : s_(s), remote_(static_cast<std::size_t>(s.nranks)), stale_(static_cast<std::size_t>(s.nranks), 1) {}

  std::vector<AttachedRegion> cover(int target, std::uint64_t addr, std::size_t bytes) override {
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

  void epoch_started() override {
    std::lock_guard lk(mutex_);
    std::fill(stale_.begin(), stale_.end(), 1);
  }

  // Origins ask for the table when they need it (AttachedRegions answers).
  void changed(const RegionTable&) override {}

  void reply(const Header& h, const std::byte* payload, std::size_t len) override {
    auto* reply = reinterpret_cast<Reply*>(h.token);
    reply->bytes.assign(reinterpret_cast<const char*>(payload), len);
    reply->done.store(1, std::memory_order_release);
  }

 private:
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
  std::vector<RegionTable> remote_;
  std::vector<std::uint8_t> stale_;
};

class PublishedDirectory final : public RegionDirectory {
 public:
  PublishedDirectory(WindowState& s, std::shared_ptr<PublishedRegions> table) : s_(s), table_(std::move(table)) {}

  std::vector<AttachedRegion> cover(int target, std::uint64_t addr, std::size_t bytes) override {
    return table_->cover(target, addr, bytes, check_);
  }
  // The tables in shared memory are always current.
  void epoch_started() override {}
  void changed(const RegionTable& mine) override {
    table_->publish(mine, [this](int o) { return s_.peers[o].life && s_.peers[o].life->gone(); });
  }
  // Never sent: every rank of the window reads the published tables and
  // asks nobody (a stray message is ignored, as every unexpected one is).
  void reply(const Header&, const std::byte*, std::size_t) override {}

 private:
  WindowState& s_;
  std::shared_ptr<PublishedRegions> table_;
  std::function<void()> check_ = [this] { s_.check_peers(); };
};

}  // namespace

std::unique_ptr<RegionDirectory> fetched_regions(WindowState& state) { return std::make_unique<FetchedRegions>(state); }

std::unique_ptr<RegionDirectory> published_regions(WindowState& state, std::shared_ptr<PublishedRegions> table) {
  return std::make_unique<PublishedDirectory>(state, std::move(table));
}

}  // namespace onesided::detail
