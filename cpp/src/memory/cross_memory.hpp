// Cross-memory attach (process_vm_writev/readv): on one host, a put or get
// to a Create window is one kernel copy straight between the two
// processes' memory, with no provider and no progress needed at the
// target. Used only for plain data movement; atomics stay on the window's
// one atomic path.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace onesided::detail::cma {

// Whether this process may read `len` (>= 1) bytes at `addr` in process
// `pid` (Linux only; containers and Yama ptrace_scope can forbid it).
bool can_read(pid_t pid, std::uint64_t addr, std::size_t len);
// Copy `len` bytes; raise a Transport error naming the call on failure.
void write(pid_t pid, std::uint64_t remote, const void* local, std::size_t len);
void read(pid_t pid, void* local, std::uint64_t remote, std::size_t len);

// Many copies in as few system calls as the kernel allows (a non-contiguous
// put or get): each piece is `bytes` between `local` here and `remote` there.
struct Piece {
  void* local;
  std::uint64_t remote;
  std::size_t bytes;
};
void write(pid_t pid, std::span<const Piece> pieces);
void read(pid_t pid, std::span<const Piece> pieces);

}  // namespace onesided::detail::cma
