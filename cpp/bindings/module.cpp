// The _core extension module: error translation, the op x dtype table and
// process lifetime here; one file per bound concept beside it:
//   register_window.cpp      the Window class, what it is, shared and dynamic memory
//   register_operations.cpp  put, get, accumulate family, rmw: full and shortcut forms
//   register_sync.cpp        fence, locks, flushes, post/start/complete/wait, free
//   register_notify.cpp      notified RMA: notify and the notification counters
//   register_request.cpp     Request
//   register_layout.cpp      Layout: the non-contiguous elements a call touches
//   register_machine.cpp     what the core sees of the machine: providers, host key
//   register_buffers.cpp     memory from DLPack producers and raw addresses, checked and held
//   register_allocated_memory.cpp  Alloc_mem's memory, exported through the buffer protocol
//   register_exit.cpp        the deadline on a dying rank's exit; a faulting thread's native frames
//   register_call_floor.cpp  a C function that does nothing: the bench's floor under a call
//   register_races.cpp       the race checker's call sites and warnings
//   python_signals.cpp       the core's waits run Python's signal handlers
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "onesided/error.hpp"
#include "onesided/runtime.hpp"
#include "onesided/types.hpp"
#include "checked_args.hpp"
#include "python_signals.hpp"
#include "registrations.hpp"
#include "shortcut_args.hpp"

namespace py = pybind11;

namespace {

// Every error category and the onesided._errors class it becomes: the
// core's, then the two the bindings add (checked_args.hpp).
constexpr std::pair<onesided::ErrorCategory, const char*> kErrorClasses[] = {
    {onesided::ErrorCategory::Argument, "ArgumentError"},
    {onesided::ErrorCategory::Bounds, "BoundsError"},
    {onesided::ErrorCategory::Epoch, "EpochError"},
    {onesided::ErrorCategory::Unsupported, "UnsupportedError"},
    {onesided::ErrorCategory::OpSet, "OpSetError"},
    {onesided::ErrorCategory::Transport, "TransportError"},
    {onesided::ErrorCategory::Internal, "InternalError"},
    {onesided::ErrorCategory::Race, "RaceError"},
    {onesided::python::kArgumentType, "ArgumentTypeError"},
    {onesided::python::kBufferArgument, "BufferArgumentError"},
};

const char* exception_class(onesided::ErrorCategory c) {
  for (const auto& [category, name] : kErrorClasses)
    if (category == c) return name;
  return "Error";
}

}  // namespace

void onesided::python::set_python_error(const onesided::Error& e) {
  // An interrupted wait raises what the signal handler raised.
  if (e.category() == onesided::ErrorCategory::Interrupted) return raise_interruption(e.what());
  py::object cls = py::module_::import("onesided._errors").attr(exception_class(e.category()));
  PyErr_SetString(cls.ptr(), e.what());
}

PYBIND11_MODULE(_core, m) {
  m.doc() = "onesided's C++ core. Use the onesided package, not this module.";

  // The one place C++ errors become Python exceptions: the classes live in
  // onesided/_errors.py, where they are documented.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const onesided::Error& e) {
      onesided::python::set_python_error(e);
    }
  });

  // Every wait in the core runs Python's signal handlers (python_signals.cpp).
  onesided::python::install_interrupt_hook();

  // Python error class name -> category code, for _fail_creation.
  py::dict codes;
  for (const auto& [category, name] : kErrorClasses) codes[name] = static_cast<int>(category);
  m.attr("ERROR_CODES") = codes;

  // The op x dtype table, in table order: Python derives its constants and
  // dtype codes from these, never from a copy.
  m.def("dtypes", [] {
    py::list out;
    for (const auto& d : onesided::kDtypes) out.append(py::make_tuple(std::string(d.name), d.size));
    return out;
  });
  // The pair dtypes as (code, value dtype code, byte offset of the index,
  // itemsize): Python makes their numpy records from these.
  m.def("pairs", [] {
    py::list out;
    for (const auto& d : onesided::kDtypes)
      if (auto value = onesided::pair_value(d.id))
        out.append(py::make_tuple(static_cast<int>(d.id), static_cast<int>(*value),
                                  onesided::pair_index_offset(d.id),
                                  d.size));
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
  // onesided.Op: the shortcut forms take an op by this exact type (a plain
  // int is never an op).
  m.def("_set_op_type", [](py::handle type) {
    if (!PyType_Check(type.ptr())) throw py::type_error("not a type");
    onesided::python::op_type() = reinterpret_cast<PyTypeObject*>(type.inc_ref().ptr());
  });
  // onesided.Layout: the strided fast entries take a target Layout of
  // exactly this type, through its per-dtype cache of core layouts.
  m.def("_set_layout_type", [](py::handle type) {
    if (!PyType_Check(type.ptr())) throw py::type_error("not a type");
    onesided::python::layout_type() = reinterpret_cast<PyTypeObject*>(type.inc_ref().ptr());
  });
  m.def("_remember_op", [](py::handle obj, int op) {
    if (op < 0 || op >= static_cast<int>(onesided::kNumOps)) throw py::value_error("not an op code");
    onesided::python::remember_op(obj, static_cast<onesided::Op>(op));
  });
  m.def("shutdown", &onesided::shutdown,
        "Stops the progress threads (called at interpreter exit).",
        py::call_guard<py::gil_scoped_release>());
  m.def("remove_stale_shared_memory", &onesided::remove_stale_shared_memory,
        "Removes this user's /dev/shm entries left by processes that no longer exist; returns how many.");

  m.def("load_libfabric", [](const std::string& bundled) {
    const auto lib = onesided::load_libfabric(bundled);
    return py::make_tuple(lib.path, lib.chosen_by, lib.major, lib.minor);
  }, "Loads the process's libfabric once (onesided/runtime.hpp); returns (path, chosen_by, major, minor).");

  onesided::python::register_request(m);
  onesided::python::register_layout(m);
  auto window = onesided::python::register_window(m);
  onesided::python::register_operations(m, window);
  onesided::python::register_sync(m, window);
  onesided::python::register_notify(m, window);
  onesided::python::register_machine(m);
  onesided::python::register_buffers(m);
  onesided::python::register_allocated_memory(m);
  onesided::python::register_exit(m);
  onesided::python::register_call_floor(m);
  onesided::python::register_races(m);
}
