// The Window class: construction, the memory it exposes, what it is (size,
// rank, flavor, model, provider, info, its data path and atomics report),
// shared_query and a dynamic window's attach/detach. The operations and the
// synchronisation calls are bound by register_operations.cpp and
// register_sync.cpp. Argument parsing (buffer specs, target tuples, mpi4py
// constants) happens in python/onesided; here we only extract pointers.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <climits>

#include <utility>

#include "registrations.hpp"
#include "bootstrap_py.hpp"
#include "checked_args.hpp"
#include "onesided/error.hpp"
#include "onesided/window.hpp"
#include "parsed_args.hpp"

namespace py = pybind11;

namespace onesided::python {

py::class_<Window> register_window(py::module_& m) {
  // The Python Window subclasses this class, so the window itself exports
  // its memory through the buffer protocol (np.frombuffer(win, ...)).
  py::class_<Window> cls(m, "Window", py::buffer_protocol());
  window_type() = reinterpret_cast<PyTypeObject*>(cls.ptr());
  // The buffer export, written against the C API rather than def_buffer,
  // whose caster hands over a never-created instance unchecked. The Python
  // Window inherits this slot.
  window_type()->tp_as_buffer->bf_getbuffer = [](PyObject* self, Py_buffer* view, int flags) -> int {
    try {
      const Window& w = checked(self);
      return PyBuffer_FillInfo(view, self, w.base(), static_cast<Py_ssize_t>(w.size()), 0, flags);
    } catch (const Error& e) {
      set_python_error(e);
      view->obj = nullptr;
      return -1;
    }
  };
  window_type()->tp_as_buffer->bf_releasebuffer = nullptr;
  // `memory`: the buffer to expose (Create), the size in bytes (Allocate,
  // Allocate_shared), or None (Create_dynamic). The Python layer checks
  // every argument first (_mpi_args.creation); these checks are the
  // backstop, and like it they fail at every rank: a bad argument found here
  // is handed to fail_creation, which takes part in the core's agreement
  // where the other ranks call a factory.
  cls.def(py::init([](py::handle memory, py::handle disp_unit_arg, py::handle info_arg, py::object comm,
                      int flavor) {
            auto group = std::make_shared<PyBootstrap>(std::move(comm));
            int disp_unit = 0;
            Info info;
            std::size_t size = 0;
            std::pair<void*, std::size_t> region{};
            try {
              const std::int64_t unit = int64_arg(disp_unit_arg, "disp_unit");
              if (unit <= 0 || unit > INT_MAX)
                raise(ErrorCategory::Argument, "disp_unit must be in [1, 2147483647], got " + std::to_string(unit));
              disp_unit = static_cast<int>(unit);
              if (!py::isinstance<py::dict>(info_arg)) raise(kArgumentType, "info must be a dict of str to str");
              for (auto [k, v] : py::reinterpret_borrow<py::dict>(info_arg)) {
                if (!PyUnicode_CheckExact(k.ptr()) || !PyUnicode_CheckExact(v.ptr()))
                  raise(kArgumentType, "info keys and values must be str");
                info.emplace(k.cast<std::string>(), v.cast<std::string>());
              }
              if (flavor == static_cast<int>(Flavor::Allocate) || flavor == static_cast<int>(Flavor::Shared)) {
                const std::int64_t n = int64_arg(memory, "size");
                if (n < 0) raise(ErrorCategory::Argument, "size must be >= 0, got " + std::to_string(n));
                size = static_cast<std::size_t>(n);
              } else if (flavor == static_cast<int>(Flavor::Create)) {
                region = writable_region(memory, "window memory must be a writable C-contiguous buffer");
              } else if (flavor != static_cast<int>(Flavor::Dynamic)) {
                raise(ErrorCategory::Argument, "bad flavor code " + std::to_string(flavor));
              }
            } catch (const Error& e) {
              Window::fail_creation(*group, e);
            }
            // Creation is collective and waits for every rank: without the
            // GIL (the bootstrap takes it for its own calls), so other
            // Python threads of this rank run meanwhile.
            py::gil_scoped_release nogil;
            if (flavor == static_cast<int>(Flavor::Shared))
              return Window::allocate_shared(size, disp_unit, info, std::move(group));
            if (flavor == static_cast<int>(Flavor::Dynamic)) return Window::create_dynamic(info, std::move(group));
            if (flavor == static_cast<int>(Flavor::Allocate))
              return Window::allocate(size, disp_unit, info, std::move(group));
            return Window::create(region.first, region.second, disp_unit, info, std::move(group), Flavor::Create);
          }),
          py::arg("memory"), py::arg("disp_unit"), py::arg("info"), py::arg("comm"), py::arg("flavor"),
          py::keep_alive<1, 2>())
      .def_property_readonly("_address",
                             guard([](const Window& w) { return reinterpret_cast<std::uintptr_t>(w.base()); }))
      .def_property_readonly("_size", guard(&Window::size))
      .def_property_readonly("_disp_unit", guard(&Window::disp_unit))
      .def_property_readonly("_rank", guard(&Window::rank))
      .def_property_readonly("_group_size", guard(&Window::group_size))
      .def_property_readonly("_flavor", guard([](const Window& w) { return static_cast<int>(w.flavor()); }))
      .def_property_readonly("_model", guard([](const Window& w) { return static_cast<int>(w.model()); }))
      .def_property_readonly("_provider", guard(&Window::provider))
      // The data path chosen at creation, fixed for the window's life; the
      // Python Window binds its per-call forms by _completes_in_call and
      // _holds_get_results once.
      .def_property_readonly("_path_name", guard(&Window::path_name))
      .def_property_readonly("_path_description", guard(&Window::path_description))
      .def_property_readonly("_completes_in_call", guard(&Window::completes_in_call))
      .def_property_readonly("_holds_get_results", guard(&Window::holds_get_results))
      .def_property_readonly("_in_flight", guard(&Window::in_flight))
      .def("_info", guard(&Window::info))
      .def("_size_of", guard([](const Window& w, py::handle rank) { return w.size_of(rank_arg(rank, "rank")); }))
      .def("_disp_unit_of",
           guard([](const Window& w, py::handle rank) { return w.disp_unit_of(rank_arg(rank, "rank")); }))
      .def("_native_atomics", guard([](const Window& w, int dtype) { return w.native_atomics(to_dtype(dtype)); }))
      .def("_atomics_reason", guard([](const Window& w, int dtype) { return w.atomics_reason(to_dtype(dtype)); }))
      .def("_native_count", guard([](const Window& w, int function, int op, int dtype) {
             if (function < 0 || function >= static_cast<int>(kNumFunctions))
               raise(ErrorCategory::Argument, "bad function code");
             return w.native_count(static_cast<Function>(function), to_op(op), to_dtype(dtype));
           }))
      .def("_shared_query", [](py::handle self, py::handle rank) -> py::tuple {
             SharedMemory m = checked(self).shared_query(rank_arg(rank, "rank"));
             // Memory this rank cannot reach: None, which the Python layer
             // turns into an empty buffer at address 0 (MPI's null baseptr).
             if (!m.base) return py::make_tuple(py::none(), m.disp_unit);
             // The array owns a reference to the mapping, so views of it
             // stay valid even after the window is freed; memory outside a
             // mapping (a window's own, not shared) is kept by the window.
             py::object keep = py::reinterpret_borrow<py::object>(self);
             if (m.mapping) {
               auto* owner = new std::shared_ptr<void>(m.mapping);
               keep = py::capsule(owner, [](void* p) { delete static_cast<std::shared_ptr<void>*>(p); });
             }
             py::array_t<std::uint8_t> bytes({static_cast<py::ssize_t>(m.size)}, {py::ssize_t{1}},
                                             static_cast<std::uint8_t*>(m.base), keep);
             return py::make_tuple(bytes, m.disp_unit);
           })
      .def("_attach", guard([](Window& w, py::handle memory) {
             auto [base, size] = writable_region(memory, "Attach: memory must be a writable C-contiguous buffer");
             w.attach(base, size);
           }))
      .def("_detach", guard([](Window& w, py::handle address) {
             w.detach(reinterpret_cast<const void*>(static_cast<std::uintptr_t>(int64_arg(address, "address"))));
           }));

  // Window creation failed on this rank before a factory could be called
  // (the Python layer found its own arguments bad): raise the same error at
  // every rank of `comm`, as the factory would have (category: a code of
  // ERROR_CODES).
  m.def("_fail_creation", [](py::object comm, int category, const std::string& message) {
    PyBootstrap group(std::move(comm));
    py::gil_scoped_release nogil;  // the bootstrap takes the GIL when it needs it
    Window::fail_creation(group, Error(static_cast<ErrorCategory>(category), message));
  });

  m.attr("FLAVOR_CREATE") = static_cast<int>(Flavor::Create);
  m.attr("FLAVOR_ALLOCATE") = static_cast<int>(Flavor::Allocate);
  m.attr("FLAVOR_DYNAMIC") = static_cast<int>(Flavor::Dynamic);
  m.attr("FLAVOR_SHARED") = static_cast<int>(Flavor::Shared);
  m.attr("WIN_SEPARATE") = static_cast<int>(Model::Separate);
  m.attr("WIN_UNIFIED") = static_cast<int>(Model::Unified);
  m.attr("PROC_NULL") = kProcNull;
  return cls;
}

}  // namespace onesided::python
