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

void check_one_host(const std::vector<std::string>& keys, const std::vector<std::string>& names, const char* what) {
  for (std::size_t r = 1; r < keys.size(); ++r)
    if (keys[r] != keys[0])
      raise(ErrorCategory::Argument, std::string(what) +
                                         " needs every rank of the group on one host (sharing /dev/shm, "
                                         "the IPC, pid and network namespaces and the boot): rank 0 is on " +
                                         names[0] + " [" + keys[0] + "], rank " + std::to_string(r) + " on " +
                                         names[r] + " [" + keys[r] + "]");
}

SharedSegment::Layout::Layout(const std::vector<std::size_t>& all, bool noncontig, std::size_t control) {
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::size_t total = checked_round_up(control, page, "shared window layout");
  // Every rank computes the same layout from the same data, so an
  // overflow raises at every rank alike.
  for (const std::size_t sz : all) {
    if (noncontig) total = checked_round_up(total, page, "shared window layout");
    offsets.push_back(total);
    sizes.push_back(sz);
    total = checked_add(total, sz, "shared window layout");
  }
  if (total > kMaxWindowBytes)
    raise(ErrorCategory::Argument, "the shared window's segments add up to " + std::to_string(total) +
                                       " bytes, more than one mapping can hold");
  mapped = std::max<std::size_t>(total, 1);
}

// Empty: it never has a name, so whoever dies, at any step, leaves nothing behind.
MemoryFile SharedSegment::offer() { return MemoryFile::make("onesided-segment", 0); }

std::shared_ptr<SharedSegment> SharedSegment::map(const Layout& layout, MemoryFile file, const MemoryFileAddress& at) {
  std::shared_ptr<SharedSegment> seg(new SharedSegment);
  seg->sizes_ = layout.sizes;
  seg->mapped_ = layout.mapped;
  if (!file) file = MemoryFile::open(at);
  file.resize(seg->mapped_);
  seg->map_ = file.map(seg->mapped_);
  // One mapping: a segment's offset in it is its key, the same everywhere.
  seg->keys_.assign(layout.offsets.begin(), layout.offsets.end());
  for (const std::size_t offset : layout.offsets) seg->bases_.push_back(seg->map_ + offset);
  seg->file_ = std::move(file);
  return seg;
}

std::shared_ptr<SharedSegment> SharedSegment::create(Bootstrap& group, std::size_t size, bool noncontig,
                                                     std::size_t control) {
  const int n = group.size(), me = group.rank();
  // Round 1: hosts and sizes, so every rank computes the same layout, and
  // where rank 0 holds the file (memory/memory_file.hpp: others open it
  // through /proc). A host is its host key (memory/host_identity.hpp); its
  // name is for the message.
  std::string offered;
  MemoryFile file;
  if (me == 0) {
    try {
      file = offer();
      offered = file.address().text();
    } catch (const Error& e) {
      offered = "!" + std::string(e.what());
    }
  }
  auto all = group.allgather(std::to_string(size) + "\n" + host_key() + "\n" + host_name() + "\n" + offered);
  std::vector<std::size_t> sizes;
  std::vector<std::string> keys, names;
  std::string at0;
  for (int r = 0; r < n; ++r) {
    const auto nl = all[r].find('\n');
    const auto nl2 = all[r].find('\n', nl + 1);
    const auto nl3 = all[r].find('\n', nl2 + 1);
    sizes.push_back(std::stoull(all[r].substr(0, nl)));
    keys.push_back(all[r].substr(nl + 1, nl2 - nl - 1));
    names.push_back(all[r].substr(nl2 + 1, nl3 - nl2 - 1));
    if (r == 0) at0 = all[r].substr(nl3 + 1);
  }
  check_one_host(keys, names, "Allocate_shared");
  const Layout layout(sizes, noncontig, control);
  if (at0.starts_with('!'))
    raise(ErrorCategory::Transport, "Allocate_shared: rank 0 could not make the shared memory (" + at0.substr(1) + ")");
  std::shared_ptr<SharedSegment> seg;
  std::string mapped;
  try {
    seg = map(layout, std::move(file), MemoryFileAddress::from_text(at0));
  } catch (const Error& e) {
    mapped = e.what();
  }
  // Round 2: everyone has mapped (or failed); only then may rank 0 close
  // the descriptor the others opened the file through.
  all = group.allgather(mapped);
  for (int r = 0; r < n; ++r)
    if (!all[r].empty())
      raise(ErrorCategory::Transport, "Allocate_shared: rank " + std::to_string(r) +
                                          " could not map the shared memory (" + all[r] + ")");
  seg->mapped_everywhere();
  return seg;
}

SharedSegment::~SharedSegment() {
  if (map_) ::munmap(map_, mapped_);
  for (const auto& [p, bytes] : peer_maps_) ::munmap(p, bytes);
}

}  // namespace onesided::detail
