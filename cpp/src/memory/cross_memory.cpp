#include "memory/cross_memory.hpp"

#include <sys/uio.h>

#include <algorithm>
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

namespace {

// Up to IOV_MAX pieces per call. The kernel stops early only at a page it
// cannot reach or after a signal; whatever a call left undone is finished
// piece by piece by the single-copy form, which continues from where it stopped.
template <class Vectored, class Single>
void copy_pieces(std::span<const Piece> pieces, Vectored&& vectored, Single&& single) {
  constexpr std::size_t kMax = 1024;  // IOV_MAX on Linux
  std::vector<iovec> local, remote;
  for (std::size_t first = 0; first < pieces.size(); first += kMax) {
    const auto chunk = pieces.subspan(first, std::min(kMax, pieces.size() - first));
    local.clear();
    remote.clear();
    std::size_t total = 0;
    for (const Piece& p : chunk) {
      local.push_back({p.local, p.bytes});
      remote.push_back({reinterpret_cast<void*>(p.remote), p.bytes});
      total += p.bytes;
    }
    ssize_t n = vectored(local, remote);
    std::size_t done = n > 0 ? static_cast<std::size_t>(n) : 0;
    if (done == total) continue;
    for (const Piece& p : chunk) {
      if (done >= p.bytes) {
        done -= p.bytes;
        continue;
      }
      single(Piece{static_cast<char*>(p.local) + done, p.remote + done, p.bytes - done});
      done = 0;
    }
  }
}

}  // namespace

void write(pid_t pid, std::span<const Piece> pieces) {
  copy_pieces(
      pieces,
      [&](const std::vector<iovec>& l, const std::vector<iovec>& r) {
        return ::process_vm_writev(pid, l.data(), l.size(), r.data(), r.size(), 0);
      },
      [&](const Piece& p) { write(pid, p.remote, p.local, p.bytes); });
}

void read(pid_t pid, std::span<const Piece> pieces) {
  copy_pieces(
      pieces,
      [&](const std::vector<iovec>& l, const std::vector<iovec>& r) {
        return ::process_vm_readv(pid, l.data(), l.size(), r.data(), r.size(), 0);
      },
      [&](const Piece& p) { read(pid, p.local, p.remote, p.bytes); });
}

}  // namespace onesided::detail::cma
