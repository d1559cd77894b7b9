// Memory that processes on one host share, with no name in any file system:
// a memfd, which other processes open through /proc/<pid>/fd/<fd> of the
// process holding it. Nothing of it can outlive the last process that maps
// or holds it, so a rank killed with SIGKILL, under any launcher, leaves
// nothing behind (a POSIX shm_open object's name stays in /dev/shm until
// someone unlinks it, and a killed process unlinks nothing).
//
// Why /proc/<pid>/fd and not the alternatives:
//  - shm_open names: a name must exist until the last process that will
//    open it has done so; for a doorbell, which peers open whenever they
//    first share a window with its owner, that is the owner's whole life.
//  - passing the descriptor over a Unix socket (SCM_RIGHTS): robust, but
//    the holder must serve connections, so it needs a thread or a protocol
//    step in every collective, and a dead server hangs the opener.
//  - pidfd_getfd: needs ptrace-attach rights (Yama's ptrace_scope 1, the
//    default of many distributions, refuses them) and Linux 5.6.
// Opening /proc/<pid>/fd/<fd> needs only what reading /proc/<pid> does: the
// same user, a dumpable process (ptrace read mode, which Yama leaves
// alone), the same pid namespace, and it never blocks: the holder takes no
// part. Ranks share a host only with equal host keys, which include the pid
// namespace (memory/host_identity.hpp).
//
// Invariants:
//  - The file is made close-on-exec: an exec'd child never holds it.
//  - An address names the file by (device, inode) as well as by descriptor:
//    a descriptor number the holder closed and reused for something else is
//    refused, never mapped.
//  - A forked child inherits the descriptor and the mapping, like any.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace onesided::detail {

// Where another process on this host finds a MemoryFile.
struct MemoryFileAddress {
  std::int64_t pid = 0;     // the process holding it open
  std::int32_t fd = -1;     // its descriptor there (-1: none)
  std::uint64_t device = 0;  // the file's identity, checked on opening
  std::uint64_t inode = 0;

  // Its wire form for a Bootstrap allgather, and back (an Internal error if
  // `text` is not one).
  std::string text() const;
  static MemoryFileAddress from_text(const std::string& text);
};

class MemoryFile {
 public:
  // `bytes` zeroed bytes; `label` shows in /proc/<pid>/maps as
  // "/memfd:<label> (deleted)". Raises a Transport error naming the call.
  static MemoryFile make(const char* label, std::size_t bytes);
  // The file held at `at` (by another process, or this one). Raises a
  // Transport error saying what failed: the holder is gone or refuses
  // (ENOENT, EACCES), or its descriptor now names another file.
  static MemoryFile open(const MemoryFileAddress& at);

  MemoryFile() = default;
  MemoryFile(MemoryFile&& o) noexcept;
  MemoryFile& operator=(MemoryFile&& o) noexcept;
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  ~MemoryFile();

  // Maps its first `bytes` read-write and shared; the mapping outlives this
  // object (munmap it). Raises a Transport error naming the call.
  std::byte* map(std::size_t bytes) const;
  // Sets its size to `bytes` (new bytes read as zero). Raises a Transport
  // error naming the call.
  void resize(std::size_t bytes) const;
  // What a peer passes to open(); an empty address (fd -1) when closed.
  MemoryFileAddress address() const;
  explicit operator bool() const { return fd_ >= 0; }
  // Closes this process's descriptor: peers can no longer open the file
  // through it, and the memory lives on in the mappings.
  void close();

 private:
  int fd_ = -1;
  std::uint64_t device_ = 0, inode_ = 0;
};

}  // namespace onesided::detail
