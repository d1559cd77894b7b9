#include "transport/doorbell.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <ctime>
#include <map>
#include <mutex>
#include <utility>

#include "onesided/error.hpp"

namespace onesided::detail {
namespace {

// This process's bell: a child made by fork() inherits the parent's record
// (and mapping) but is another process, so its first own() makes the
// child's bell instead of sharing, ringing or consuming the parent's, and
// closes its copy of the parent's descriptor (the parent's stays open).
struct OwnBell {
  std::mutex mutex;
  pid_t pid = 0;             // the process `file` and `bell` belong to (0: none made)
  MemoryFile file;           // held open for the process's life: peers open the bell through it
  BellWord* bell = nullptr;  // null if making it failed
};
OwnBell& own_bell() {
  static OwnBell b;
  return b;
}

std::size_t page_size() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

// A page at `at`, mapped; null if it cannot be.
BellWord* map_bell(const MemoryFileAddress& at) {
  try {
    return reinterpret_cast<BellWord*>(MemoryFile::open(at).map(page_size()));
  } catch (const Error&) {
    return nullptr;
  }
}

}  // namespace

BellWord* Doorbell::own() {
  OwnBell& o = own_bell();
  const pid_t me = ::getpid();
  std::lock_guard lk(o.mutex);
  if (o.pid != me) {
    o.file.close();  // in a forked child: its copy of the parent's descriptor
    o.bell = nullptr;
    try {
      o.file = MemoryFile::make("onesided-bell", page_size());
      o.bell = reinterpret_cast<BellWord*>(o.file.map(page_size()));  // zeroed: no sleeper, no ring
    } catch (const Error&) {
      o.file.close();
    }
    o.pid = me;
  }
  return o.bell;
}

MemoryFileAddress Doorbell::address() {
  own();
  OwnBell& o = own_bell();
  std::lock_guard lk(o.mutex);
  return o.file.address();
}

BellWord* Doorbell::of(const MemoryFileAddress& at) {
  // Mappings stay for the life of the process: windows come and go, peers
  // stay the same, and a page per peer is cheap. Keyed by the file, not
  // the pid: a pid reused after its process died names another bell.
  static std::mutex mutex;
  static std::map<std::pair<std::uint64_t, std::uint64_t>, BellWord*> bells;
  if (at.fd < 0) return nullptr;
  std::lock_guard lk(mutex);
  const auto key = std::make_pair(at.device, at.inode);
  if (auto it = bells.find(key); it != bells.end()) return it->second;
  BellWord* b = map_bell(at);
  if (b) bells[key] = b;  // a failure is retried at the next window
  return b;
}

void Doorbell::wait(BellWord& bell, std::chrono::microseconds limit, const std::function<bool()>& ready) {
  std::atomic_ref<std::uint32_t> rings(bell.rings), sleepers(bell.sleepers);
  // seq_cst: a ringer that posted before our announcement is seen by ready();
  // one that posts after it sees the announcement (see ring()).
  sleepers.fetch_add(1);
  struct Leave {
    std::atomic_ref<std::uint32_t>& s;
    ~Leave() { s.fetch_sub(1); }
  } leave{sleepers};
  const std::uint32_t seen = rings.load();
  if (ready()) return;
  const auto us = limit.count();
  timespec timeout{static_cast<time_t>(us / 1000000), static_cast<long>(us % 1000000) * 1000};
  // Not FUTEX_PRIVATE: ringers are other processes.
  ::syscall(SYS_futex, &bell.rings, FUTEX_WAIT, seen, &timeout, nullptr, 0);
}

// No lost wakeup without a standalone fence: the check of `sleepers` is a
// read-modify-write (adding 0), so it and wait()'s announcement are ordered
// in the word's modification order. If the check comes later it sees the
// sleeper and rings; if earlier, the announcement reads what the check
// wrote and acquires its release, so the operation posted before ring()
// (libfabric's stores included) happens before the sleeper's ready().
// A plain load there would need a store-load fence: the posted operation is
// no atomic of ours to give release/acquire to.
void Doorbell::ring(BellWord& bell) {
  if (std::atomic_ref<std::uint32_t>(bell.sleepers).fetch_add(0, std::memory_order_acq_rel) == 0) return;
  std::atomic_ref<std::uint32_t>(bell.rings).fetch_add(1);
  ::syscall(SYS_futex, &bell.rings, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace onesided::detail
