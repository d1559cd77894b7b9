#include "transport/doorbell.hpp"

#include "transport/stale_shm.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <ctime>
#include <map>
#include <mutex>
#include <string>

namespace onesided::detail {
namespace {

std::string name_of(pid_t pid) { return "/onesided-bell-" + std::to_string(pid); }

// glibc's shm_open opens with O_CLOEXEC, and the descriptor is closed before
// returning: none outlives the call, so none leaks into exec'd or forked children.
BellWord* map_bell(pid_t pid, bool create) {
  const std::string name = name_of(pid);
  const int fd = ::shm_open(name.c_str(), O_RDWR | (create ? O_CREAT : 0), 0600);
  if (fd < 0) return nullptr;
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  if (create && ::ftruncate(fd, static_cast<off_t>(page)) != 0) {
    ::close(fd);
    return nullptr;
  }
  void* p = ::mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  return p == MAP_FAILED ? nullptr : static_cast<BellWord*>(p);
}

std::mutex& bells_mutex() {
  static std::mutex m;
  return m;
}

// This process's bell, keyed by pid: a child made by fork() inherits the
// parent's record (and mapping) but is another process, so its first own()
// makes the child's bell instead of sharing, ringing or consuming the
// parent's, and its remove_own() never touches the parent's name.
struct OwnBell {
  std::mutex mutex;
  pid_t pid = 0;             // the process `bell` belongs to (0: none made)
  BellWord* bell = nullptr;  // null if making it failed
};
OwnBell& own_bell() {
  static OwnBell b;
  return b;
}

}  // namespace

BellWord* Doorbell::own() {
  OwnBell& o = own_bell();
  const pid_t me = ::getpid();
  std::lock_guard lk(o.mutex);
  if (o.pid != me) {
    // A bell left by a dead process with this pid is reused (and reset);
    // those of other dead processes are removed.
    remove_stale_shared_memory();
    BellWord* b = map_bell(me, true);
    if (b) {
      std::atomic_ref<std::uint32_t>(b->sleepers).store(0);
      std::atomic_ref<std::uint32_t>(b->rings).store(0);
    }
    o.pid = me;
    o.bell = b;
  }
  return o.bell;
}

BellWord* Doorbell::of(pid_t pid) {
  // Mappings stay for the life of the process: windows come and go, peers
  // stay the same, and a page per peer is cheap.
  static std::map<pid_t, BellWord*> bells;
  std::lock_guard lk(bells_mutex());
  if (auto it = bells.find(pid); it != bells.end()) return it->second;
  BellWord* b = map_bell(pid, false);
  if (b) bells[pid] = b;  // a failure is retried: the peer may make it later
  return b;
}

void Doorbell::remove_own() {
  // Only a bell this very process made: never the parent's (after fork), and
  // no bell is made just to be removed. The page stays mapped (progress
  // engines may still sleep on it); a later own() makes a new named bell.
  OwnBell& o = own_bell();
  std::lock_guard lk(o.mutex);
  if (o.bell && o.pid == ::getpid()) ::shm_unlink(name_of(o.pid).c_str());
  if (o.pid == ::getpid()) o.pid = 0;
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
