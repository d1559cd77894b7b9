// The call floor: a METH_FASTCALL | METH_KEYWORDS function that does
// nothing, bound to an object the way the window's fast entries are bound
// to the window (fast_entries.hpp). `python -m onesided.bench.calls` puts
// each call beside the floor called with the same arguments: what is left
// above it is the road to the core and the core's work, not CPython's cost
// of calling a C function.
#include <pybind11/pybind11.h>

#include "registrations.hpp"

namespace {

PyObject* nothing(PyObject*, PyObject* const*, Py_ssize_t, PyObject*) noexcept { Py_RETURN_NONE; }

PyMethodDef floor_def{"call_floor", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&nothing)),
                      METH_FASTCALL | METH_KEYWORDS, "Does nothing with any arguments (the bench's call floor)."};

}  // namespace

void onesided::python::register_call_floor(py::module_& m) {
  m.def("call_floor", [](py::object self) {
    PyObject* bound = PyCFunction_NewEx(&floor_def, self.ptr(), nullptr);
    if (!bound) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(bound);
  }, py::arg("self"),
        "A C function that takes any arguments and does nothing, bound to `self` as the window's fast "
        "entries are bound to the window: the floor under every call (python -m onesided.bench.calls).");
}
