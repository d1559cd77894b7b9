// Alloc_mem's memory (onesided/allocated_memory.hpp) as a Python object:
// _core.AllocatedMemory exports its bytes through the buffer protocol
// (writable, 1-d, unsigned bytes), and every array over it holds it, so
// its mapping outlives every view (onesided.Alloc_mem wraps it in an
// onesided.buffer). The size is checked here (an integer in 64 bits,
// >= 0) and bounded by the core.
#include <pybind11/pybind11.h>

#include <memory>

#include "checked_args.hpp"
#include "onesided/allocated_memory.hpp"
#include "registrations.hpp"

namespace onesided::python {

void register_allocated_memory(py::module_& m) {
  py::class_<AllocatedMemory, std::shared_ptr<AllocatedMemory>>(m, "AllocatedMemory", py::buffer_protocol())
      .def_buffer([](AllocatedMemory& mem) {
        return py::buffer_info(mem.base(), 1, py::format_descriptor<std::uint8_t>::format(), 1,
                               {static_cast<py::ssize_t>(mem.size())}, {py::ssize_t{1}}, false);
      })
      .def_property_readonly("address", [](const AllocatedMemory& mem) {
        return reinterpret_cast<std::uintptr_t>(mem.base());
      })
      .def_property_readonly("size", &AllocatedMemory::size)
      .def_property_readonly("freed", &AllocatedMemory::freed)
      .def("free", &AllocatedMemory::free);
  m.def("_alloc_mem", [](py::handle size) {
    const std::int64_t n = int64_arg(size, "size");
    if (n < 0) raise(ErrorCategory::Argument, "Alloc_mem: size must be >= 0, got " + std::to_string(n));
    return AllocatedMemory::allocate(static_cast<std::size_t>(n));
  });
}

}  // namespace onesided::python
