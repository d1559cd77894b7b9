// The direct forms: MPI.Win's hottest calls as the instance's own methods.
// The Python Window binds them at creation (Window._make): Lock on every
// window; Put, Get, Accumulate, Get_accumulate, Fetch_and_op,
// Compare_and_swap, Flush and Unlock on windows whose operations complete in
// their call. A plain call then reaches the shortcut (shortcut_args.hpp) or
// the core with neither a Python frame nor pybind11's dispatcher in between:
// each is a CPython METH_FASTCALL | METH_KEYWORDS function bound to the
// window. Measured in one process (timeit), a Put went
// from about 150 to 90 ns this way; pybind11's own keyword handling would
// have cost 400 ns more on every call that names an argument (op=...).
//
// Arguments are matched to MPI.Win's parameter names (positionally or by
// keyword) and the defaults filled in (a displacement of 0, op SUM); a call
// the shortcut does not take, or one whose arguments do not match, goes
// unchanged to the class's Python method, which parses and checks it in full
// and raises what MPI.Win would (TypeError for a missing argument, onesided's
// errors for the rest). Errors of the core call itself are translated by the
// module's one translation (set_python_error).
#pragma once

#include <pybind11/pybind11.h>

#include <array>
#include <cstddef>
#include <new>
#include <vector>

#include "checked_args.hpp"
#include "shortcut_args.hpp"

namespace onesided::python {

namespace direct {

inline PyObject* zero() {
  static PyObject* z = PyLong_FromLong(0);
  return z;
}
// SUM, looked up at the first call that leaves op out (the forms exist
// before onesided's Op objects do).
inline PyObject* sum_op() {
  static PyObject* sum = py::object(py::module_::import("onesided._types").attr("OPS")["sum"]).release().ptr();
  return sum;
}

// The class's method `name` called with the user's own arguments.
inline PyObject* fall_back(PyObject* self, const char* name, PyObject* const* argv, Py_ssize_t nargs,
                           PyObject* kwnames) {
  PyObject* method = PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(self)), name);
  if (!method) return nullptr;
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  std::vector<PyObject*> all(static_cast<std::size_t>(nargs + nkw + 1));
  all[0] = self;
  for (Py_ssize_t i = 0; i < nargs + nkw; ++i) all[static_cast<std::size_t>(i + 1)] = argv[i];
  PyObject* out = PyObject_Vectorcall(method, all.data(), static_cast<std::size_t>(nargs + 1), kwnames);
  Py_DECREF(method);
  return out;
}

// `names[i]`: the parameter the shortcut's i-th argument comes from. False
// when the arguments do not match them (the fallback then explains why).
template <std::size_t N>
bool match(const std::array<const char*, N>& names, PyObject* const* argv, Py_ssize_t nargs, PyObject* kwnames,
           std::array<PyObject*, N>& out) {
  if (nargs > static_cast<Py_ssize_t>(N)) return false;
  for (Py_ssize_t i = 0; i < nargs; ++i) out[static_cast<std::size_t>(i)] = argv[i];
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, k);
    std::size_t j = 0;
    while (j < N && PyUnicode_CompareWithASCIIString(key, names[j]) != 0) ++j;
    if (j == N || out[j]) return false;
    out[j] = argv[nargs + k];
  }
  return true;
}

// A form is a descriptor D with
//   static constexpr const char* method;     the class's method it stands for
//   static constexpr std::array<const char*, N> params;  its parameter names
//   static constexpr const char* doc;
//   static bool take(PyObject* self, std::array<PyObject*, N>& args);
// `take` gets the matched arguments (null where left out) and returns false,
// having done nothing, when the call needs the class's method.
template <class D>
PyObject* call(PyObject* self, PyObject* const* argv, Py_ssize_t nargs, PyObject* kwnames) noexcept {
  std::array<PyObject*, D::params.size()> a{};
  try {
    if (match(D::params, argv, nargs, kwnames, a) && D::take(self, a)) Py_RETURN_NONE;
    // A refusal never leaves an exception set: the fallback would run with
    // it pending and end as SystemError.
    if (PyErr_Occurred()) return nullptr;
    return fall_back(self, D::method, argv, nargs, kwnames);
  } catch (const Error& e) {
    set_python_error(e);
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_SystemError, "onesided: an unknown C++ exception in a direct form");
  }
  return nullptr;
}

template <class D>
PyMethodDef* method_def() {
  static PyMethodDef def{D::method, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&call<D>)),
                         METH_FASTCALL | METH_KEYWORDS, D::doc};
  return &def;
}

}  // namespace direct

// The RMA calls' `take`: the arrays and the target rank are required, the
// displacement defaults to 0 (and a None one means 0 where `kNoneIsZero`: the
// `target` of Put, Get, Accumulate and Get_accumulate; Fetch_and_op's and
// Compare_and_swap's `target_disp` is an int, and None there is the full
// path's error), op to SUM; then the operation's shortcut.
template <class Operation, bool kNoneIsZero>
struct DirectOperation {
  static bool take(PyObject* self, std::array<PyObject*, Operation::kArity>& a) {
    constexpr std::size_t n = Operation::kArrays.size();  // then the rank, the displacement, the op
    for (std::size_t i = 0; i <= n; ++i)
      if (!a[i]) return false;
    if (!a[n + 1] || (kNoneIsZero && a[n + 1] == Py_None)) a[n + 1] = direct::zero();
    if constexpr (Operation::kTakesOp)
      if (!a[n + 2]) a[n + 2] = direct::sum_op();
    std::array<py::handle, Operation::kArity> args;
    for (std::size_t i = 0; i < args.size(); ++i) args[i] = a[i];
    ShortcutCallOf<Operation> c;
    if (!recognise<Operation>(args, c)) return false;
    Operation::issue(checked(self), c);
    return true;
  }
};

// The method `D::method` bound to `window` (a new reference).
template <class D>
py::object direct_method(py::handle window) {
  return py::reinterpret_steal<py::object>(PyCFunction_NewEx(direct::method_def<D>(), window.ptr(), nullptr));
}

}  // namespace onesided::python
