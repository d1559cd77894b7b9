// The direct forms of the synchronisation calls: Lock on every window,
// Flush and Unlock on windows whose operations complete in their call, as
// the instance's own methods (Window._make binds them): CPython
// METH_FASTCALL | METH_KEYWORDS functions bound to the window, so the
// common call reaches the core with neither a Python frame nor pybind11's
// dispatcher in between (pybind11's keyword handling alone costs 400 ns).
// The RMA calls have their own, table-driven entries (fast_entries.hpp).
//
// Arguments are matched to MPI.Win's parameter names (positionally or by
// keyword); a call the form does not take goes unchanged to the class's
// Python method, which is the full parse and never tries the form again: it
// translates and checks every argument and raises what MPI.Win would.
// Errors of the core call itself are translated by the module's one
// translation (set_python_error).
#pragma once

#include <pybind11/pybind11.h>

#include <array>
#include <cstddef>

#include "checked_args.hpp"
#include "fast_entries.hpp"

namespace onesided::python {

namespace direct {

template <std::size_t N>
std::array<PyObject*, N> interned(const std::array<const char*, N>& texts) {
  std::array<PyObject*, N> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = PyUnicode_InternFromString(texts[i]);
  return out;
}

// A form is a descriptor D with
//   static constexpr const char* method;     the class's method it stands for
//   static constexpr std::array<const char*, N> params;  its parameter names
//   static constexpr const char* doc;
//   static bool take(PyObject* self, std::array<PyObject*, N>& args);
// `take` gets the matched arguments (null where left out) and returns false,
// having done nothing, when the call needs the class's method. A form with
//   static constexpr bool kKept = true;
// is bound to (window, kept) instead of the window (direct_method_keeping).
template <class D>
PyObject* window_of(PyObject* self) {
  if constexpr (requires { D::kKept; }) {
    if constexpr (D::kKept) return PyTuple_GET_ITEM(self, 0);
  }
  return self;
}

template <class D>
PyObject* call(PyObject* self, PyObject* const* argv, Py_ssize_t nargs, PyObject* kwnames) noexcept {
  static const auto names = interned(D::params);  // for the process's life
  static PyObject* const method = PyUnicode_InternFromString(D::method);
  return fast::translated([&] {
    std::array<PyObject*, D::params.size()> a{};
    const bool taken = fast::match(names, argv, nargs, kwnames, a) && D::take(self, a);
    return fast::taken_or_parsed(taken, window_of<D>(self), method, argv, nargs, kwnames);
  });
}

template <class D>
PyMethodDef* method_def() {
  static PyMethodDef def{D::method, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&call<D>)),
                         METH_FASTCALL | METH_KEYWORDS, D::doc};
  return &def;
}

}  // namespace direct

// The method `D::method` bound to `window` (a new reference).
template <class D>
py::object direct_method(py::handle window) {
  return py::reinterpret_steal<py::object>(PyCFunction_NewEx(direct::method_def<D>(), window.ptr(), nullptr));
}

// The same bound to (window, kept): a form that completes operations drops
// what the window keeps for them (D::kKept).
template <class D>
py::object direct_method_keeping(py::handle window, py::handle kept) {
  const py::tuple self = py::make_tuple(window, kept);
  return py::reinterpret_steal<py::object>(PyCFunction_NewEx(direct::method_def<D>(), self.ptr(), nullptr));
}

}  // namespace onesided::python
