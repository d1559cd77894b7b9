// Shared memory left behind by processes that died without cleaning up
// (SIGKILL: a test timeout, a launcher stopping a job, a crash). onesided's
// own shared memory has no name (memory/memory_file.hpp) and goes with its
// last process; what remains is libfabric's shm provider's, whose names
// carry the owner's pid, so whoever starts next can tell leftovers apart:
//   /dev/shm/<pid>:<n>:...          libfabric shm's endpoint regions
// and, left by onesided versions before its memory was nameless:
//   /dev/shm/onesided-bell-<pid>    a process's doorbell
//   /dev/shm/onesided-<pid>-<n>-<r> a window segment
#pragma once

#include <cstddef>

namespace onesided::detail {

// Removes this user's entries whose process is gone (or a zombie) (and, with
// `own_pid`, this process's own, which only a previous process with the
// same pid can have left: call it before this process makes any). Returns
// how many it removed. A pid of another pid namespace that shares
// /dev/shm looks dead here: such entries are removed too, which is why
// only this user's are considered.
std::size_t remove_stale_shared_memory(bool own_pid = false);

}  // namespace onesided::detail
