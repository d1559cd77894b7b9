// The exit deadline (onesided/exit_deadline.hpp), armed by
// onesided.boot._exit_deadline when the interpreter ends on an uncaught
// exception in a rank of a job of several ranks; and a faulting thread's
// native frames (onesided/fatal_backtrace.hpp), armed at import when
// ONESIDED_NATIVE_BACKTRACE is set.
#include <pybind11/chrono.h>
#include <pybind11/pybind11.h>

#include "onesided/exit_deadline.hpp"
#include "onesided/fatal_backtrace.hpp"
#include "registrations.hpp"

void onesided::python::register_exit(py::module_& m) {
  m.def("_arm_exit_deadline", &onesided::arm_exit_deadline, py::arg("after"), py::arg("signal_number"),
        py::arg("status"), py::arg("message"),
        "If the process still exists `after` (a timedelta or seconds) from now, write `message` to stderr "
        "and end it by `signal_number` (its default action), or with 0 by _exit(status).");
  m.def("_report_fatal_signals", &onesided::report_fatal_signals,
        "On SIGSEGV, SIGBUS, SIGILL or SIGFPE, the faulting thread writes its id, name and native frames to "
        "stderr, then the handler that was there before takes the signal (onesided/fatal_backtrace.hpp).");
}
