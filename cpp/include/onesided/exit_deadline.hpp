// A deadline on a dying process's exit. A rank that ends on an error runs
// its exit as usual (atexit handlers, buffered output, an MPI library's
// MPI_Finalize), and some of that may wait for ranks that will never come:
// MPICH's MPI_Finalize waits for every rank to finalize, so a rank ended by
// Ctrl-C while its peers wait in a collective never exits, and neither does
// the job. arm_exit_deadline bounds that wait: if the process still exists
// `after` from now, a thread of its own writes `message` to stderr and ends
// the process itself, by `signal_number` (the default action: what an
// uncaught KeyboardInterrupt ends with is SIGINT) or, with 0, by
// _exit(status). The launcher then sees a rank that ended abnormally and
// stops the others.
//
// The thread needs no lock and no interpreter: it sleeps, writes, and
// ends the process. A process whose exit completes in time ends first and
// takes the sleeping thread with it. Arming twice keeps the earlier
// deadline running too; the first to expire acts.
#pragma once

#include <chrono>
#include <string>

namespace onesided {

void arm_exit_deadline(std::chrono::milliseconds after, int signal_number, int status, std::string message);

}  // namespace onesided
