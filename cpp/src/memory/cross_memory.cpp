#include "memory/cross_memory.hpp"

#include <sys/uio.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "onesided/error.hpp"

namespace onesided::detail::cma {
namespace {

// The kernel may copy less than asked (it stops at a page it cannot reach
// or after a signal): continue from where it stopped.
template <class Call>
void copy_all(const char* name, Call&& call, std::size_t len) {
  std::size_t done = 0;
  while (done < len) {
    const ssize_t n = call(done);
    if (n < 0) {
      if (errno == EINTR) continue;
      raise(ErrorCategory::Transport, std::string(name) + " failed: " + std::strerror(errno));
    }
    if (n == 0) raise(ErrorCategory::Transport, std::string(name) + " copied nothing");
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

bool can_read(pid_t pid, std::uint64_t addr, std::size_t len) {
  std::vector<char> buf(len);
  iovec local{buf.data(), len};
  iovec remote{reinterpret_cast<void*>(addr), len};
  return ::process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(len);
}

void write(pid_t pid, std::uint64_t remote, const void* local, std::size_t len) {
  copy_all("process_vm_writev", [&](std::size_t done) {
    iovec l{const_cast<char*>(static_cast<const char*>(local)) + done, len - done};
    iovec r{reinterpret_cast<void*>(remote + done), len - done};
    return ::process_vm_writev(pid, &l, 1, &r, 1, 0);
  }, len);
}

void read(pid_t pid, void* local, std::uint64_t remote, std::size_t len) {
  copy_all("process_vm_readv", [&](std::size_t done) {
    iovec l{static_cast<char*>(local) + done, len - done};
    iovec r{reinterpret_cast<void*>(remote + done), len - done};
    return ::process_vm_readv(pid, &l, 1, &r, 1, 0);
  }, len);
}

}  // namespace onesided::detail::cma
