#include "memory/process.hpp"

#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace onesided::detail {

bool process_gone(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  std::FILE* f = std::fopen(path, "r");
  if (!f) return false;
  char buf[512];
  const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  // "pid (comm) state ...": the state follows the last ')'.
  const char* close = std::strrchr(buf, ')');
  const char state = close && close[1] == ' ' ? close[2] : 0;
  return state == 'Z' || state == 'X';
}

}  // namespace onesided::detail
