// The _core extension module: error translation, the op x dtype table, and
// process lifetime. Window bindings live in register_window.cpp.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "transport/endpoint.hpp"
#include "fast_args.hpp"
#include "onesided/error.hpp"
#include "onesided/runtime.hpp"
#include "onesided/types.hpp"

namespace py = pybind11;

namespace onesided::python {
void register_window(py::module_& m);
}

namespace {

const char* exception_class(onesided::ErrorCategory c) {
  using C = onesided::ErrorCategory;
  switch (c) {
    case C::Argument: return "ArgumentError";
    case C::Bounds: return "BoundsError";
    case C::Epoch: return "EpochError";
    case C::Unsupported: return "UnsupportedError";
    case C::OpSet: return "OpSetError";
    case C::Transport: return "TransportError";
    case C::Internal: return "InternalError";
  }
  return "Error";
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "onesided's C++ core. Use the onesided package, not this module.";

  // The one place C++ errors become Python exceptions: the classes live in
  // onesided/_errors.py, where they are documented.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const onesided::Error& e) {
      py::object cls = py::module_::import("onesided._errors").attr(exception_class(e.category()));
      PyErr_SetString(cls.ptr(), e.what());
    }
  });

  // The op x dtype table, in table order: Python derives its constants and
  // dtype codes from these, never from a copy.
  m.def("dtypes", [] {
    py::list out;
    for (const auto& d : onesided::kDtypes) out.append(py::make_tuple(std::string(d.name), d.size));
    return out;
  });
  m.def("ops", [] {
    py::list out;
    for (const auto& o : onesided::kOps) out.append(py::make_tuple(std::string(o.name), o.operands));
    return out;
  });
  m.def("functions", [] {
    py::list out;
    for (std::size_t f = 0; f < onesided::kNumFunctions; ++f) {
      py::list ops;
      for (const auto& o : onesided::kOps)
        if (onesided::function_admits(static_cast<onesided::Function>(f), o.id))
          ops.append(static_cast<int>(o.id));
      out.append(py::make_tuple(std::string(onesided::kFunctionNames[f]), ops));
    }
    return out;
  });
  m.def("op_applies", [](int op, int dtype) {
    return onesided::op_applies(static_cast<onesided::Op>(op), static_cast<onesided::Dtype>(dtype));
  });
  m.def("_remember_op", [](py::handle obj, int op) {
    if (op < 0 || op >= static_cast<int>(onesided::kNumOps)) throw py::value_error("not an op code");
    onesided::python::remember_op(obj, static_cast<onesided::Op>(op));
  });
  m.def("shutdown", &onesided::shutdown,
        "Stops the progress threads (called at interpreter exit).",
        py::call_guard<py::gil_scoped_release>());

  onesided::python::register_window(m);
}
