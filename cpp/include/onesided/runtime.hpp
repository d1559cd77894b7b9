// Process-wide lifetime of onesided's communication resources.
#pragma once

#include <cstddef>
#include <string>

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

// The libfabric this process runs on, and why that one.
struct Libfabric {
  std::string path;       // the file mapped
  std::string chosen_by;  // "ONESIDED_LIBFABRIC", "bundled" or "system"
  unsigned major = 0, minor = 0;  // its fi_version()
};

// Loads the libfabric onesided runs on, once per process: the one named by
// the environment variable ONESIDED_LIBFABRIC if it is set (a path to a
// libfabric.so; `system`: the dynamic loader's libfabric.so.1, the one an MPI
// library in the process already uses if there is one; `bundled`: `bundled`),
// else `bundled` if not empty (the Python wheel passes its own copy), else
// the dynamic loader's libfabric.so.1. onesided calls it on first use with no
// argument; a later call returns the first one's library whatever it is
// passed. Raises Argument if ONESIDED_LIBFABRIC names nothing loadable or not
// a libfabric, Transport if the default cannot be loaded or is older than 1.9.
Libfabric load_libfabric(const std::string& bundled = "");

}  // namespace onesided
