#include "memory/shared_segment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "memory/checked.hpp"
#include "memory/host_identity.hpp"
#include "onesided/error.hpp"

namespace onesided::detail {
namespace {

std::string errno_text(const char* call) { return std::string(call) + ": " + std::strerror(errno); }

// A name no other window (of this or another job) uses.
std::string fresh_name() {
  static std::atomic<unsigned> counter{0};
  std::random_device rd;
  return "/onesided-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
         std::to_string(rd());
}

}  // namespace

std::shared_ptr<SharedSegment> SharedSegment::create(Bootstrap& group, std::size_t size, bool noncontig,
                                                     std::size_t control) {
  const int n = group.size(), me = group.rank();
  // Round 1: hosts and sizes, so every rank computes the same layout. A
  // host is its host key (memory/host_identity.hpp); its name is for the message.
  std::string mine = std::to_string(size) + "\n" + host_key() + "\n" + host_name();
  auto all = group.allgather(mine);
  std::shared_ptr<SharedSegment> seg(new SharedSegment);
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::size_t total = checked_round_up(control, page, "shared window layout");
  std::string key0, name0;
  for (int r = 0; r < n; ++r) {
    const auto nl = all[r].find('\n');
    const auto nl2 = all[r].find('\n', nl + 1);
    const std::size_t sz = std::stoull(all[r].substr(0, nl));
    const std::string key = all[r].substr(nl + 1, nl2 - nl - 1), name = all[r].substr(nl2 + 1);
    if (r == 0) key0 = key, name0 = name;
    if (key != key0)
      raise(ErrorCategory::Argument, "Allocate_shared needs every rank of the group on one host (sharing /dev/shm, "
                                     "the IPC, pid and network namespaces and the boot): rank 0 is on " +
                                         name0 + " [" + key0 + "], rank " + std::to_string(r) + " on " + name +
                                         " [" + key + "]");
    // Every rank computes the same layout from the same data, so an
    // overflow raises at every rank alike.
    if (noncontig) total = checked_round_up(total, page, "shared window layout");
    seg->offsets_.push_back(total);
    seg->sizes_.push_back(sz);
    total = checked_add(total, sz, "shared window layout");
  }
  if (total > kMaxWindowBytes)
    raise(ErrorCategory::Argument, "the shared window's segments add up to " + std::to_string(total) +
                                       " bytes, more than one mapping can hold");
  seg->mapped_ = std::max<std::size_t>(total, 1);

  // Round 2: rank 0 makes the object and names it; the others map it.
  std::string status, name;
  int fd = -1;
  if (me == 0) {
    name = fresh_name();
    fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) status = errno_text("shm_open");
    else if (::ftruncate(fd, static_cast<off_t>(seg->mapped_)) != 0) status = errno_text("ftruncate");
  }
  all = group.allgather(status + "\n" + name);
  const auto nl = all[0].find('\n');
  status = all[0].substr(0, nl);
  name = all[0].substr(nl + 1);
  if (!status.empty()) {
    if (fd >= 0) {
      ::close(fd);
      ::shm_unlink(name.c_str());
    }
    raise(ErrorCategory::Transport, "Allocate_shared: rank 0 could not make the shared memory (" + status + ")");
  }
  std::string mapped;
  if (me != 0) fd = ::shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) {
    mapped = errno_text("shm_open");
  } else {
    void* p = ::mmap(nullptr, seg->mapped_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) mapped = errno_text("mmap");
    else seg->map_ = static_cast<std::byte*>(p);
  }
  // Round 3: everyone has mapped (or failed); the name is no longer needed,
  // and unlinking it now means nothing is left behind if a rank dies.
  all = group.allgather(mapped);
  if (me == 0) ::shm_unlink(name.c_str());
  for (int r = 0; r < n; ++r)
    if (!all[r].empty())
      raise(ErrorCategory::Transport, "Allocate_shared: rank " + std::to_string(r) +
                                          " could not map the shared memory (" + all[r] + ")");
  return seg;
}

SharedSegment::~SharedSegment() {
  if (map_) ::munmap(map_, mapped_);
}

}  // namespace onesided::detail
