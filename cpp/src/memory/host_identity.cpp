#include "memory/host_identity.hpp"

#include "onesided/machine.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <string>

namespace onesided::detail {
namespace {

std::string first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line) || line.empty()) return "?";
  return line;
}

// "<device>:<inode>" of a path, following links (the /proc/self/ns/* links
// resolve to their namespace's nsfs inode).
std::string identity(const char* path) {
  struct stat st {};
  if (::stat(path, &st) != 0) return "?";
  return std::to_string(static_cast<unsigned long long>(st.st_dev)) + ":" +
         std::to_string(static_cast<unsigned long long>(st.st_ino));
}

std::string read_host_key() {
  return "boot=" + first_line("/proc/sys/kernel/random/boot_id") + " shm=" + identity("/dev/shm") +
         " ipc=" + identity("/proc/self/ns/ipc") + " pid=" + identity("/proc/self/ns/pid") +
         " net=" + identity("/proc/self/ns/net");
}

}  // namespace

// Read once per process: five system calls and a file stream were a
// quarter of a later window's creation (perf, Create_dynamic at 2 ranks).
// A forked child reads its own (it may unshare a namespace before its
// first window); a process that moves to another namespace after its
// first window keeps the key it read then.
std::string host_key() {
  static std::mutex mutex;
  static pid_t reader = 0;
  static std::string key;
  std::lock_guard lock(mutex);
  if (reader != ::getpid()) {
    key = read_host_key();
    reader = ::getpid();
  }
  return key;
}

std::string host_name() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

}  // namespace onesided::detail

std::string onesided::host_key() { return detail::host_key(); }
