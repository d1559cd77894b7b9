// The binding of each concept, one register_*.cpp apiece (the style of
// boost-histogram); module.cpp calls them in this order.
#pragma once

#include <pybind11/pybind11.h>

#include "onesided/window.hpp"

namespace onesided::python {

namespace py = pybind11;

void register_request(py::module_& m);                                     // register_request.cpp
void register_layout(py::module_& m);                                      // register_layout.cpp
py::class_<Window> register_window(py::module_& m);                        // register_window.cpp
void register_operations(py::module_& m, py::class_<Window>& window);     // register_operations.cpp
void register_sync(py::module_& m, py::class_<Window>& window);           // register_sync.cpp
void register_notify(py::module_& m, py::class_<Window>& window);         // register_notify.cpp
void register_machine(py::module_& m);                                     // register_machine.cpp
void register_buffers(py::module_& m);                                     // register_buffers.cpp
void register_allocated_memory(py::module_& m);                            // register_allocated_memory.cpp
void register_exit(py::module_& m);                                        // register_exit.cpp
void register_call_floor(py::module_& m);                                  // register_call_floor.cpp
void register_races(py::module_& m);                                       // register_races.cpp

}  // namespace onesided::python
