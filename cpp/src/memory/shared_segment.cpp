#include "memory/shared_segment.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "memory/checked.hpp"
#include "memory/host_identity.hpp"
#include "memory/memory_file.hpp"
#include "onesided/error.hpp"

namespace onesided::detail {
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
    seg->keys_.push_back(total);
    seg->sizes_.push_back(sz);
    total = checked_add(total, sz, "shared window layout");
  }
  if (total > kMaxWindowBytes)
    raise(ErrorCategory::Argument, "the shared window's segments add up to " + std::to_string(total) +
                                       " bytes, more than one mapping can hold");
  seg->mapped_ = std::max<std::size_t>(total, 1);

  // Round 2: rank 0 makes the file and says where it holds it; the others
  // open it through /proc (memory/memory_file.hpp) and map it. It never has
  // a name: whoever dies, at any step, leaves nothing behind.
  std::string status;
  MemoryFile file;
  if (me == 0) {
    try {
      file = MemoryFile::make("onesided-segment", seg->mapped_);
    } catch (const Error& e) {
      status = e.what();
    }
  }
  all = group.allgather(status.empty() ? file.address().text() : "!" + status);
  if (all[0].starts_with('!'))
    raise(ErrorCategory::Transport,
          "Allocate_shared: rank 0 could not make the shared memory (" + all[0].substr(1) + ")");
  const MemoryFileAddress address = MemoryFileAddress::from_text(all[0]);
  std::string mapped;
  try {
    if (me != 0) file = MemoryFile::open(address);
    seg->map_ = file.map(seg->mapped_);
  } catch (const Error& e) {
    mapped = e.what();
  }
  // Round 3: everyone has mapped (or failed); only then may rank 0 close
  // the descriptor the others opened the file through (as `file` goes).
  all = group.allgather(mapped);
  for (int r = 0; r < n; ++r)
    if (!all[r].empty())
      raise(ErrorCategory::Transport, "Allocate_shared: rank " + std::to_string(r) +
                                          " could not map the shared memory (" + all[r] + ")");
  for (int r = 0; r < n; ++r) seg->bases_.push_back(seg->map_ + seg->keys_[r]);
  return seg;
}

SharedSegment::~SharedSegment() {
  if (map_) ::munmap(map_, mapped_);
  for (const auto& [p, bytes] : peer_maps_) ::munmap(p, bytes);
}

}  // namespace onesided::detail
