// The Window class: construction, the memory it exposes, what it is (size,
// rank, flavor, model, provider, info, its data path and atomics report),
// shared_query and a dynamic window's attach/detach. The operations and the
// synchronisation calls are bound by register_operations.hpp and
// register_sync.hpp. Argument parsing (buffer specs, target tuples, mpi4py
// constants) happens in python/onesided; here we only extract pointers.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bootstrap_py.hpp"
#include "onesided/error.hpp"
#include "onesided/window.hpp"
#include "parsed_args.hpp"

namespace py = pybind11;

namespace onesided::python {

py::class_<Window> register_window(py::module_& m) {
  // The Python Window subclasses this class, so the window itself exports
  // its memory through the buffer protocol (np.frombuffer(win, ...)).
  py::class_<Window> cls(m, "Window", py::buffer_protocol());
  // `memory`: the buffer to expose (Create), the size in bytes (Allocate,
  // Allocate_shared), or None (Create_dynamic).
  cls.def(py::init([](py::object memory, int disp_unit, const Info& info, py::object comm, int flavor) {
            auto group = std::make_shared<PyBootstrap>(std::move(comm));
            if (flavor == static_cast<int>(Flavor::Shared))
              return Window::allocate_shared(memory.cast<std::size_t>(), disp_unit, info, std::move(group));
            if (flavor == static_cast<int>(Flavor::Dynamic)) return Window::create_dynamic(info, std::move(group));
            if (flavor == static_cast<int>(Flavor::Allocate) && py::isinstance<py::int_>(memory))
              return Window::allocate(memory.cast<std::size_t>(), disp_unit, info, std::move(group));
            auto [base, size] = writable_region(memory, "window memory must be a writable C-contiguous buffer");
            return Window::create(base, size, disp_unit, info, std::move(group), static_cast<Flavor>(flavor));
          }),
          py::arg("memory"), py::arg("disp_unit"), py::arg("info"), py::arg("comm"), py::arg("flavor"),
          py::keep_alive<1, 2>())
      .def_buffer([](Window& w) {
        return py::buffer_info(w.base(), 1, py::format_descriptor<std::uint8_t>::format(), 1,
                               {static_cast<py::ssize_t>(w.size())}, {py::ssize_t{1}}, false);
      })
      .def_property_readonly("_address", [](const Window& w) { return reinterpret_cast<std::uintptr_t>(w.base()); })
      .def_property_readonly("_size", &Window::size)
      .def_property_readonly("_disp_unit", &Window::disp_unit)
      .def_property_readonly("_rank", &Window::rank)
      .def_property_readonly("_group_size", &Window::group_size)
      .def_property_readonly("_flavor", [](const Window& w) { return static_cast<int>(w.flavor()); })
      .def_property_readonly("_model", [](const Window& w) { return static_cast<int>(w.model()); })
      .def_property_readonly("_provider", &Window::provider)
      // The data path chosen at creation, fixed for the window's life; the
      // Python Window binds its per-call forms by _completes_in_call once.
      .def_property_readonly("_path_name", &Window::path_name)
      .def_property_readonly("_path_description", &Window::path_description)
      .def_property_readonly("_completes_in_call", &Window::completes_in_call)
      .def("_info", &Window::info)
      .def("_size_of", &Window::size_of)
      .def("_disp_unit_of", &Window::disp_unit_of)
      .def("_native_atomics", [](const Window& w, int dtype) { return w.native_atomics(to_dtype(dtype)); })
      .def("_atomics_reason", [](const Window& w, int dtype) { return w.atomics_reason(to_dtype(dtype)); })
      .def("_native_count",
           [](const Window& w, int function, int op, int dtype) {
             if (function < 0 || function >= static_cast<int>(kNumFunctions))
               raise(ErrorCategory::Argument, "bad function code");
             return w.native_count(static_cast<Function>(function), to_op(op), to_dtype(dtype));
           })
      .def("_shared_query",
           [](const Window& w, int rank) {
             SharedMemory m = w.shared_query(rank);
             // The array owns a reference to the mapping, so views of it
             // stay valid even after the window is freed.
             auto* owner = new std::shared_ptr<void>(m.mapping);
             py::capsule keep(owner, [](void* p) { delete static_cast<std::shared_ptr<void>*>(p); });
             py::array_t<std::uint8_t> bytes({static_cast<py::ssize_t>(m.size)}, {py::ssize_t{1}},
                                             static_cast<std::uint8_t*>(m.base), keep);
             return py::make_tuple(bytes, m.disp_unit);
           })
      .def("_attach",
           [](Window& w, py::handle memory) {
             auto [base, size] = writable_region(memory, "Attach: memory must be a writable C-contiguous buffer");
             w.attach(base, size);
           })
      .def("_detach", [](Window& w, std::uintptr_t address) { w.detach(reinterpret_cast<const void*>(address)); });

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
