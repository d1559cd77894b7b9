// Request: what the request-based operations (Rput, ..., Rrmw2) return.
// Wait and Test drive progress and may wait, so both release the GIL.

#include <pybind11/pybind11.h>

#include "registrations.hpp"
#include "onesided/request.hpp"

namespace onesided::python {

namespace py = pybind11;

void register_request(py::module_& m) {
  using release = py::call_guard<py::gil_scoped_release>;
  py::class_<Request>(m, "Request")
      .def("_wait", &Request::wait, release())
      .def("_test", &Request::test, release());
}

}  // namespace onesided::python
