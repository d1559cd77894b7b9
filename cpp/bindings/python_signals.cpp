// The interrupt hook the bindings set (onesided/interrupt.hpp): a wait in
// the core asks it every 50 ms, and it runs the interpreter's signal
// handlers, so Ctrl-C ends a Fence or a Wait_notify with KeyboardInterrupt
// (or whatever the user's handler raises) instead of never.
//
// Python runs signal handlers in the main thread only: in any other thread
// the hook returns at once, without the GIL (taking it every 50 ms from a
// waiting thread would cost the thread running Python a switch each time).
// The exception a handler raised is kept for the thread that waited, and
// set_python_error (module.cpp) raises it when the core's Interrupted error
// reaches the bindings.
#include "python_signals.hpp"

#include <pybind11/pybind11.h>

#include <atomic>

#include "onesided/interrupt.hpp"

namespace onesided::python {

namespace py = pybind11;

namespace {

std::atomic<unsigned long> main_thread{0};

// What the handler raised, owned until raised (or replaced by a later one).
struct Raised {
  PyObject* type = nullptr;
  PyObject* value = nullptr;
  PyObject* traceback = nullptr;
};
thread_local Raised raised;

bool finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

bool run_signal_handlers() {
  if (PyThread_get_thread_ident() != main_thread.load(std::memory_order_relaxed)) return false;
  if (!Py_IsInitialized() || finalizing()) return false;
  const PyGILState_STATE gil = PyGILState_Ensure();
  // A wait may run while an exception is being handled (a destructor's
  // Free): set it aside so the handlers see a clean slate, then put it back.
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  const bool interrupted = PyErr_CheckSignals() != 0;
  if (interrupted) {
    Py_XDECREF(raised.type);
    Py_XDECREF(raised.value);
    Py_XDECREF(raised.traceback);
    PyErr_Fetch(&raised.type, &raised.value, &raised.traceback);
  }
  PyErr_Restore(type, value, traceback);
  PyGILState_Release(gil);
  return interrupted;
}

}  // namespace

void install_interrupt_hook() {
  main_thread.store(
      py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>(),
      std::memory_order_relaxed);
  set_interrupt_hook(&run_signal_handlers);
}

void raise_interruption(const char* message) {
  if (raised.type) {
    PyErr_Restore(raised.type, raised.value, raised.traceback);
    raised = Raised{};
  } else {
    // Interrupted without a handler's exception of this thread: a hook of
    // the embedding's own (a C++ program that also imports onesided).
    PyErr_SetString(PyExc_KeyboardInterrupt, message);
  }
}

}  // namespace onesided::python
