// Whether a process is gone: no such pid, or a zombie nobody has reaped
// (a killed rank whose parent exited first stays one under an init that
// does not reap). Used to watch same-host peers and to sweep /dev/shm.
#pragma once

#include <sys/types.h>

namespace onesided::detail {

bool process_gone(pid_t pid);

}  // namespace onesided::detail
