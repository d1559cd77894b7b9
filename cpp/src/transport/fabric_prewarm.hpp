// libfabric's first fi_getinfo initialises every provider it was built
// with, and Debian's libfabric 1.20 reads /proc/kallsyms twice doing so:
// 0.25-0.33 s here, nine tenths of a job's first window (whose own work,
// the endpoint, its progress thread and the window, is about 30 ms).
// prewarm_fabric() runs that initialisation on a thread of its own once
// the library is loaded (load_libfabric, when onesided is imported), so the
// first window waits only for what is left of it: libfabric initialises
// under its own lock, and a window's fi_getinfo that comes first waits
// there.
//
// Invariants:
//  - fork() waits for it to finish (pthread_atfork's prepare handler): a
//    child never inherits libfabric's lock held by a thread it lacks;
//  - so does process exit (a static's destructor), before libfabric's own
//    destructors run;
//  - libfabric reads its FI_* variables then: one set in the process after
//    onesided is imported no longer reaches libfabric's own parsing (onesided
//    reads FI_PROVIDER at each window, as before). Jobs set them in the
//    environment they start ranks with.
#pragma once

namespace onesided::detail {

// Starts it, once per process; later calls do nothing.
void prewarm_fabric();

}  // namespace onesided::detail
