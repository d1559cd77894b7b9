// Which ranks are on "the same host": those that can share memory, decided
// from what sharing needs, never from the hostname (two containers may share
// a hostname and nothing else; one kernel may carry many hostnames).
//
// Two processes share a host key when they run on the same boot of one
// kernel (boot id), see the same /dev/shm (its device and inode: the tmpfs
// libfabric's shm provider and onesided's segments live in), share the IPC
// namespace (POSIX shared memory and futexes), the pid namespace (cross-
// memory attach and doorbells name peers by pid) and the network namespace
// (abstract Unix sockets, which libfabric's shm machinery may use, are
// scoped by it; and a process in another network namespace is, for every
// purpose a user can see, another host). The mount namespace is not part
// of it: `ip netns exec` and container runtimes give each process its own
// while /dev/shm stays the same mount.
#pragma once

#include <string>

namespace onesided::detail {

// This process's host key: equal between two processes exactly when both
// can share memory as above. Parts that cannot be read (no /proc) are
// written as "?" so that such processes still compare equal to each other
// only on what could be read.
std::string host_key();

// The hostname, for messages only.
std::string host_name();

}  // namespace onesided::detail
