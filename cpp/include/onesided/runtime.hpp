// Process-wide lifetime of onesided's communication resources.
#pragma once

namespace onesided {

// Stops the progress threads and closes every provider endpoint this
// process opened (the shm provider removes its /dev/shm region then). Call
// it once at the end of a program, after every window is freed; the Python
// package does so at interpreter exit. Windows cannot be used afterwards.
void shutdown();

}  // namespace onesided
