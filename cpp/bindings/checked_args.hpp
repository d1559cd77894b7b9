// The rules every argument that enters the bindings from Python obeys, in
// one place: integers (ranks, displacements) are Python ints or objects with
// __index__ (numpy integers), never bools, floats or strings, range-checked
// in 64 bits before anything narrows them (a rank to the core's int); and a
// Window that was never constructed raises instead of being dereferenced.
// Errors are onesided::Error, with two categories the bindings add to the
// core's (module.cpp translates them; window creation's agreement carries
// them between ranks like any other): a TypeError-class error for an
// argument of the wrong kind, a BufferError-class one for a buffer that
// cannot be used as asked.
#pragma once

#include <pybind11/pybind11.h>

#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "onesided/error.hpp"
#include "onesided/window.hpp"

namespace onesided::python {

namespace py = pybind11;

// Beyond the core's categories (which end well below 64): onesided's
// ArgumentTypeError and BufferArgumentError.
inline constexpr auto kArgumentType = static_cast<ErrorCategory>(64);
inline constexpr auto kBufferArgument = static_cast<ErrorCategory>(65);

// Sets the Python exception an Error becomes (module.cpp), for the C-API
// slots that report errors by return value.
void set_python_error(const Error& e);

inline std::string type_name(py::handle h) { return Py_TYPE(h.ptr())->tp_name; }

// A Python int (or __index__) in 64 bits. `what` names the argument.
inline std::int64_t int64_arg(py::handle h, const char* what) {
  PyObject* o = h.ptr();
  py::object owned;
  if (!PyLong_CheckExact(o)) {
    if (PyBool_Check(o))
      raise(kArgumentType, std::string(what) + " must be an integer, not a bool");
    PyObject* index = PyNumber_Index(o);
    if (!index) {
      PyErr_Clear();
      raise(kArgumentType, std::string(what) + " must be an integer, got " + type_name(h));
    }
    owned = py::reinterpret_steal<py::object>(index);
    o = index;
  }
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow || (v == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    raise(ErrorCategory::Argument, std::string(what) + " " + py::str(h).cast<std::string>() +
                                       " does not fit in 64 bits");
  }
  return v;
}

// A rank: an integer the core's int holds. Whether it is in the window's
// group (or PROC_NULL) is the core's check, which names the group's size.
inline int rank_arg(py::handle h, const char* what = "target rank") {
  const std::int64_t v = int64_arg(h, what);
  if (v < INT_MIN || v > INT_MAX)
    raise(ErrorCategory::Argument, std::string(what) + " " + std::to_string(v) + " is not in the window's group");
  return static_cast<int>(v);
}

// The Window behind `self`, or an error when it was never constructed:
// Window.__new__(Window) leaves pybind11's holder empty (and its value
// pointer not to be trusted), so the bindings take `self` as a handle and
// look at the holder themselves. window_type() is set at registration.
inline PyTypeObject*& window_type() {
  static PyTypeObject* type = nullptr;
  return type;
}

inline Window& checked(py::handle self) {
  if (!PyObject_TypeCheck(self.ptr(), window_type()))
    raise(kArgumentType, std::string("expected an onesided Window, got ") + type_name(self));
  auto v_h = reinterpret_cast<py::detail::instance*>(self.ptr())->get_value_and_holder();
  if (!v_h.holder_constructed() || !v_h.value_ptr())
    raise(ErrorCategory::Epoch,
          "this Window was never created: use Window.Create, Allocate, Allocate_shared or Create_dynamic");
  return *static_cast<Window*>(v_h.value_ptr());
}

// A binding's callable with `self` checked first: guard(&Window::member) or
// guard([](Window& w, ...) { ... }) become callables that take `self` as a
// handle (see checked).
template <class R, class... A>
auto guard(R (Window::*m)(A...)) {
  return [m](py::handle self, A... a) -> R { return (checked(self).*m)(std::forward<A>(a)...); };
}
template <class R, class... A>
auto guard(R (Window::*m)(A...) const) {
  return [m](py::handle self, A... a) -> R { return (checked(self).*m)(std::forward<A>(a)...); };
}
template <class F, class R, class W, class... A>
auto guard_call(F f, R (F::*)(W, A...) const) {
  return [f](py::handle self, A... a) -> R { return f(checked(self), std::forward<A>(a)...); };
}
template <class F, class = decltype(&F::operator())>
auto guard(F f) {
  return guard_call(std::move(f), &F::operator());
}

}  // namespace onesided::python
