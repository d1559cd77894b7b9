// Waits in the core run Python's signal handlers (python_signals.cpp).
#pragma once

namespace onesided::python {

// Sets the core's interrupt hook to one that runs Python's signal
// handlers; module.cpp calls it at import.
void install_interrupt_hook();

// Sets, as the current Python error, what a signal handler raised during
// this thread's interrupted wait (KeyboardInterrupt by default). Holding
// the GIL, for the core's Interrupted error only.
void raise_interruption(const char* message);

}  // namespace onesided::python
