// Process-wide lifetime of onesided's communication resources.
#pragma once

#include <cstddef>

namespace onesided {

// Stops the progress threads and closes every provider endpoint this
// process opened (the shm provider removes its /dev/shm region then). Call
// it once at the end of a program, after every window is freed; the Python
// package does so at interpreter exit. Windows cannot be used afterwards.
void shutdown();

// Removes this user's /dev/shm entries (libfabric shm regions, onesided's
// doorbells and segments) left by processes that no longer exist, for
// example ranks killed by SIGKILL; returns how many. onesided runs it when
// a process opens its first endpoint, and the launcher after every job.
std::size_t remove_stale_shared_memory();

}  // namespace onesided
