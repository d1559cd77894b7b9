// The fast entries: the instance's own Put, Get, Accumulate, Get_accumulate,
// Fetch_and_op, Compare_and_swap, Rmw, Rmw2, Put_notify, Get_notify and
// Accumulate_notify, CPython METH_FASTCALL | METH_KEYWORDS functions bound
// to every window at creation (python/onesided window calls table). One road
// from a call to the core:
//
//   win.Put(...)  -> fast entry: plain arrays, int ranks and displacements,
//                    known ops (shortcut_args.hpp: recognise) -> the core
//                 -> anything else: the class's method with the user's own
//                    arguments, which is the full parse (generated from the
//                    calls table; it never tries the shortcut again) -> the
//                    core's full form (register_operations.cpp)
//
// Parameter names and the default op come from the Python calls table at
// import (_core._define_fast), so the table is the one description of each
// call; what is written here per call is only how its arguments map onto
// its shortcut (Entry below). Each call has two entries, chosen per window
// at creation, never per call:
//   Inline:  windows whose operations complete in their call: keeps the GIL
//            (a release would cost a quarter of the call) and keeps nothing;
//            bound with the window as `self`;
//   Holding: every other window: releases the GIL around the core call,
//            which may wait, then keeps the arrays in the window's _pending
//            (keep_until_complete) until a completion point drops them;
//            bound with (window, _pending) as `self`.
#pragma once

#include <pybind11/pybind11.h>

#include <array>
#include <cstddef>
#include <new>
#include <string>
#include <vector>

#include "checked_args.hpp"
#include "shortcut_args.hpp"

namespace onesided::python::fast {

inline PyObject* zero() {
  static PyObject* z = PyLong_FromLong(0);
  return z;
}

// What follows the shortcut's own arguments (arrays, rank, displacement, op).
enum class Extra {
  None,
  Assertion,     // Rmw, Rmw2: only 0 (or left out) takes the fast entry
  Notification,  // the notified forms: the index, checked, then notify()
};

// One call's entry: `Operation` its shortcut; `kNoneIsZero` whether a None
// displacement means 0 (the `target` of Put, Get, Accumulate and
// Get_accumulate; `target_disp` is an int, and None there is the full
// parse's error); `kExtra` its last parameter. The names and default op are
// the calls table's, set once at import.
template <class Operation, bool kNoneIsZero, Extra kExtra = Extra::None>
struct Entry {
  static constexpr std::size_t kParams = Operation::kArity + (kExtra == Extra::None ? 0 : 1);
  static inline std::array<PyObject*, kParams> names{};  // interned, owned; null until defined
  static inline PyObject* default_op = nullptr;          // owned; for an op left out
  static inline PyObject* method = nullptr;              // the MPI.Win name, for the fallback
};

// `out[j]` from positional and keyword arguments; false when they do not
// match the names (the full parse then raises Python's own TypeError).
template <std::size_t N>
bool match(const std::array<PyObject*, N>& names, PyObject* const* argv, Py_ssize_t nargs, PyObject* kwnames,
           std::array<PyObject*, N>& out) {
  if (nargs > static_cast<Py_ssize_t>(N)) return false;
  for (Py_ssize_t i = 0; i < nargs; ++i) out[static_cast<std::size_t>(i)] = argv[i];
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, k);
    std::size_t j = 0;
    while (j < N && key != names[j]) ++j;  // keyword names are interned, as are ours
    if (j == N) {
      j = 0;
      while (j < N && PyUnicode_Compare(key, names[j]) != 0) ++j;
    }
    if (j == N || out[j]) return false;
    out[j] = argv[nargs + k];
  }
  return true;
}

// The class's method (the full parse) with the user's own arguments.
inline PyObject* full_parse(PyObject* window, PyObject* method, PyObject* const* argv, Py_ssize_t nargs,
                            PyObject* kwnames) {
  PyObject* fn = PyObject_GetAttr(reinterpret_cast<PyObject*>(Py_TYPE(window)), method);
  if (!fn) return nullptr;
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  std::vector<PyObject*> all(static_cast<std::size_t>(nargs + nkw + 1));
  all[0] = window;
  for (Py_ssize_t i = 0; i < nargs + nkw; ++i) all[static_cast<std::size_t>(i + 1)] = argv[i];
  PyObject* out = PyObject_Vectorcall(fn, all.data(), static_cast<std::size_t>(nargs + 1), kwnames);
  Py_DECREF(fn);
  return out;
}

// The arrays of an issued operation, kept until its target's next
// completion point (nothing is issued toward PROC_NULL).
template <std::size_t N>
void keep(PyObject* pending, int target, const std::array<py::handle, N>& args, std::size_t n) {
  if (target != kProcNull) keep_until_complete(py::reinterpret_borrow<py::dict>(pending), args[n], args.data(), n);
}

template <class E, class Operation, bool kNoneIsZero, Extra kExtra, bool kHolding>
bool take(PyObject* window, PyObject* pending, std::array<PyObject*, E::kParams>& a) {
  constexpr std::size_t n = Operation::kArrays.size();  // then the rank, the displacement, the op
  for (std::size_t i = 0; i <= n; ++i)
    if (!a[i]) return false;
  if (!a[n + 1] || (kNoneIsZero && a[n + 1] == Py_None)) a[n + 1] = zero();
  if constexpr (Operation::kTakesOp)
    if (!a[n + 2]) a[n + 2] = E::default_op;
  std::array<py::handle, Operation::kArity> args;
  for (std::size_t i = 0; i < args.size(); ++i) args[i] = a[i];
  ShortcutCallOf<Operation> c;
  if (!recognise<Operation>(args, c)) return false;
  Window& w = checked(window);
  std::size_t index = 0;
  if constexpr (kExtra == Extra::Assertion) {
    PyObject* assertion = a[Operation::kArity];
    std::int64_t v = 0;
    if (assertion && (!shortcut_int(assertion, v) || v != 0)) return false;  // an implicit epoch: the full parse
  } else if constexpr (kExtra == Extra::Notification) {
    PyObject* i = a[Operation::kArity];
    if (!shortcut_index(w, i ? i : zero(), index)) return false;
  }
  if constexpr (!kHolding) {
    Operation::issue(w, c);
    if constexpr (kExtra == Extra::Notification) w.notify(c.target, index);
  } else {
    bool issued = false;
    try {
      py::gil_scoped_release nogil;
      Operation::issue(w, c);
      issued = true;
      if constexpr (kExtra == Extra::Notification) w.notify(c.target, index);
    } catch (...) {
      // An issued operation may still read or write its arrays, whatever
      // became of its notification.
      if (issued) keep(pending, c.target, args, n);
      throw;
    }
    keep(pending, c.target, args, n);
  }
  return true;
}

// `body()` with every C++ exception become the Python one it stands for,
// for the C-API functions that report errors by return value: onesided's
// errors as their classes, never SystemError.
template <class Body>
PyObject* translated(Body&& body) noexcept {
  try {
    return body();
  } catch (const Error& e) {
    set_python_error(e);
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_Format(PyExc_RuntimeError, "onesided: %s", e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "onesided: an unknown C++ exception");
  }
  return nullptr;
}

// The entry's result once its form did or did not take the call: None, or
// the full parse. A refusal never leaves an exception set (the full parse
// would run with it pending and end as SystemError).
inline PyObject* taken_or_parsed(bool taken, PyObject* window, PyObject* method, PyObject* const* argv,
                                 Py_ssize_t nargs, PyObject* kwnames) {
  if (taken) Py_RETURN_NONE;
  if (PyErr_Occurred()) return nullptr;
  return full_parse(window, method, argv, nargs, kwnames);
}

template <class E, class Operation, bool kNoneIsZero, Extra kExtra, bool kHolding>
PyObject* enter(PyObject* self, PyObject* const* argv, Py_ssize_t nargs, PyObject* kwnames) noexcept {
  PyObject* window = kHolding ? PyTuple_GET_ITEM(self, 0) : self;
  PyObject* pending = kHolding ? PyTuple_GET_ITEM(self, 1) : nullptr;
  return translated([&] {
    std::array<PyObject*, E::kParams> a{};
    const bool taken = match(E::names, argv, nargs, kwnames, a) &&
                       take<E, Operation, kNoneIsZero, kExtra, kHolding>(window, pending, a);
    return taken_or_parsed(taken, window, E::method, argv, nargs, kwnames);
  });
}

// A call's two entries and their registration.
struct Forms {
  PyMethodDef* inline_def;
  PyMethodDef* holding_def;
  std::size_t params;
  PyObject** names;
  PyObject** default_op;
  PyObject** method;
};

template <class Operation, bool kNoneIsZero, Extra kExtra = Extra::None>
Forms forms() {
  using E = Entry<Operation, kNoneIsZero, kExtra>;
  static PyMethodDef inline_def{"", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(
                                        &enter<E, Operation, kNoneIsZero, kExtra, false>)),
                                METH_FASTCALL | METH_KEYWORDS, nullptr};
  static PyMethodDef holding_def{"", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(
                                         &enter<E, Operation, kNoneIsZero, kExtra, true>)),
                                 METH_FASTCALL | METH_KEYWORDS, nullptr};
  return {&inline_def, &holding_def, E::kParams, E::names.data(), &E::default_op, &E::method};
}

}  // namespace onesided::python::fast
