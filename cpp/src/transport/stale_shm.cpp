#include "transport/stale_shm.hpp"

#include "memory/process.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <string>
#include <string_view>

namespace onesided::detail {
namespace {

// The pid an entry is named after, or 0 when it is not one of ours.
pid_t owner_of(std::string_view name) {
  std::string_view digits;
  if (name.starts_with("onesided-bell-")) {
    digits = name.substr(14);
  } else if (name.starts_with("onesided-")) {
    digits = name.substr(9, name.find('-', 9) - 9);
  } else {
    const auto colon = name.find(':');
    if (colon == std::string_view::npos) return 0;
    digits = name.substr(0, colon);
  }
  if (digits.empty() || digits.size() > 9) return 0;
  pid_t pid = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return 0;
    pid = pid * 10 + (c - '0');
  }
  return pid;
}

}  // namespace

std::size_t remove_stale_shared_memory(bool own_pid) {
  DIR* dir = ::opendir("/dev/shm");
  if (!dir) return 0;
  std::size_t removed = 0;
  const pid_t me = ::getpid();
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    const pid_t pid = owner_of(name);
    if (pid <= 0) continue;
    const bool stale = pid == me ? own_pid : process_gone(pid);
    if (!stale) continue;
    const std::string path = "/dev/shm/" + name;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || st.st_uid != ::geteuid()) continue;
    removed += ::unlink(path.c_str()) == 0;
  }
  ::closedir(dir);
  return removed;
}

}  // namespace onesided::detail
