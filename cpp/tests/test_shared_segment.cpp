// A shared segment is memory every rank maps and no file system names, at
// any moment of its making: a rank killed anywhere leaves nothing in
// /dev/shm. Watched with inotify, since a name made and unlinked within
// the creation (as shm_open's were) would not be seen by a look afterwards.
#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "memory/allocated_blocks.hpp"
#include "memory/shared_segment.hpp"
#include "onesided/allocated_memory.hpp"
#include "onesided/error.hpp"
#include "pair_processes.hpp"

using onesided::detail::SharedSegment;

namespace {

// Names created in /dev/shm since `watch` began that carry one of `pids`
// (other processes of the machine make names there too), as one string.
std::string created(int watch, const std::vector<std::string>& pids) {
  std::string names;
  alignas(inotify_event) char buf[4096];
  for (ssize_t n; (n = ::read(watch, buf, sizeof buf)) > 0;)
    for (char* p = buf; p < buf + n;) {
      auto* e = reinterpret_cast<inotify_event*>(p);
      const std::string name = e->len ? e->name : "";
      for (const auto& pid : pids)
        if (!name.empty() && name.find(pid) != std::string::npos) names += name + " ";
      p += sizeof(inotify_event) + e->len;
    }
  return names;
}

bool mapped_without_a_name(const void* p) {
  FILE* maps = std::fopen("/proc/self/maps", "r");
  if (!maps) return false;
  char line[512];
  bool found = false;
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  while (std::fgets(line, sizeof line, maps)) {
    std::uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo <= at && at < hi)
      found = std::strstr(line, "/memfd:onesided-segment") != nullptr;
  }
  std::fclose(maps);
  return found;
}

// What window creation does for a Create window over Alloc_mem blocks
// (window/create.cpp join_blocks), with rounds of the test's own: the
// control mapping from rank 0's empty file, every peer's block, and a
// round saying every rank mapped every block.
std::shared_ptr<SharedSegment> join(onesided::Bootstrap& boot, std::byte* base, const std::vector<std::string>& places,
                                    std::size_t control) {
  using onesided::detail::MemoryFile;
  if (!SharedSegment::in_blocks(places)) return nullptr;
  MemoryFile file;
  if (boot.rank() == 0) file = SharedSegment::offer();
  const std::string at = boot.allgather(file ? file.address().text() : "")[0];
  auto seg = SharedSegment::map(SharedSegment::Layout(std::vector<std::size_t>(places.size(), 0), false, control),
                                std::move(file), onesided::detail::MemoryFileAddress::from_text(at));
  const std::string failed = seg->join(boot.rank(), base, places);
  for (const auto& x : boot.allgather(failed))
    if (!x.empty()) return nullptr;
  seg->mapped_everywhere();
  return seg;
}

}  // namespace

TEST(SharedSegment, EveryRankMapsItAndNoNameEverExists) {
  onesided::testing::run_pair([](int rank, auto boot) {
    const int watch = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (watch < 0 || ::inotify_add_watch(watch, "/dev/shm", IN_CREATE) < 0) return false;
    const auto pids = boot->allgather(std::to_string(::getpid()));  // both watch before either creates
    auto seg = SharedSegment::create(*boot, 4096, true, 64);
    // Each rank writes its own segment; after a barrier each reads the other's.
    std::memset(seg->base(rank), 'a' + rank, 4096);
    boot->barrier();
    const bool shared = seg->base(1 - rank)[4095] == static_cast<std::byte>('a' + (1 - rank));
    boot->barrier();
    const std::string names = created(watch, pids);
    ::close(watch);
    if (!names.empty()) std::fprintf(stderr, "rank %d saw /dev/shm names made: %s\n", rank, names.c_str());
    if (!shared) std::fprintf(stderr, "rank %d: the other rank's segment is not shared\n", rank);
    const bool anonymous = mapped_without_a_name(seg->control());
    if (!anonymous) std::fprintf(stderr, "rank %d: the segment is not a onesided memfd mapping\n", rank);
    return names.empty() && shared && anonymous;
  });
}

// Create over Alloc_mem: each rank's window is a slice of its own block;
// joined, each rank reaches the other's slice at the other's offset, with
// the same stripe key for an element in both processes, and one rank with
// memory in no block makes both ranks refuse, alike.
TEST(SharedSegment, JoinedBlocksReachEachOthersSlice) {
  onesided::testing::run_pair([](int rank, auto boot) {
    auto block = onesided::AllocatedMemory::allocate(4096);
    std::byte* window = block->base() + 64 * (rank + 1);  // a slice at a different offset per rank
    auto use = onesided::detail::use_allocated(window, 128);
    if (!use) return false;
    const auto places = boot->allgather(onesided::detail::place_text(128, &use->place));
    auto seg = join(*boot, window, places, 64);
    if (!seg) return false;
    std::memset(window, 'a' + rank, 128);
    boot->barrier();
    const bool reached = seg->size(1 - rank) == 128 && seg->base(1 - rank)[0] == static_cast<std::byte>('a' + (1 - rank)) &&
                         seg->base(1 - rank)[127] == static_cast<std::byte>('a' + (1 - rank));
    const auto keys = boot->allgather(std::to_string(seg->offset_of(0, seg->base(0) + 8)));
    const bool same_key = keys[0] == keys[1];
    boot->barrier();
    // Rank 1's memory in no block: both get null.
    std::byte plain[128];
    const auto mixed = boot->allgather(rank == 1 ? onesided::detail::place_text(sizeof plain, nullptr)
                                                 : onesided::detail::place_text(128, &use->place));
    const bool refused = join(*boot, rank == 1 ? plain : window, mixed, 64) == nullptr;
    // Free_mem refuses while the use lives, then succeeds.
    bool held = false;
    try {
      block->free();
    } catch (const onesided::Error&) {
      held = true;
    }
    use.reset();
    block->free();
    if (!reached || !same_key || !refused || !held)
      std::fprintf(stderr, "rank %d: reached %d same_key %d refused %d held %d\n", rank, reached, same_key, refused,
                   held);
    return reached && same_key && refused && held;
  });
}
