// Request: what the request-based operations (Rput, ..., Rrmw2) return.
// Wait and Test drive progress and may wait, so both release the GIL; so
// does _arm (in nasty mode it issues the held operations). _done and
// _ready_fd serve event loops (python/onesided/window/_aio.py).

#include <pybind11/pybind11.h>

#include "registrations.hpp"
#include "onesided/request.hpp"

namespace onesided::python {

namespace py = pybind11;

void register_request(py::module_& m) {
  using release = py::call_guard<py::gil_scoped_release>;
  py::class_<Request>(m, "Request")
      .def("_wait", &Request::wait, release())
      .def("_test", &Request::test, release())
      .def("_done", &Request::done)
      .def("_arm", &Request::arm, release());
  // The eventfd that armed requests' completions write to (one per process).
  m.def("_ready_fd", &Request::ready_fd);
}

}  // namespace onesided::python
