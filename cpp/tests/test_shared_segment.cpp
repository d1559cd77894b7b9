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

#include "memory/shared_segment.hpp"
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
