// Notified RMA (window.hpp's notify() and the counters' calls). The Python
// layer (window/_notify.py) makes Put_notify and its relatives from the
// operation's full form followed by _notify. Calls that can wait (notify
// may wait for a Post; test_notify polls progress; wait_notify blocks)
// release the GIL; reading or setting a counter never waits.

#include <pybind11/pybind11.h>

#include "registrations.hpp"
#include "checked_args.hpp"
#include "onesided/window.hpp"

namespace onesided::python {

namespace py = pybind11;

namespace {

// A counter's index or value: an integer, not negative.
std::uint64_t count_arg(py::handle h, const char* what) {
  const std::int64_t v = int64_arg(h, what);
  if (v < 0) raise(ErrorCategory::Argument, std::string(what) + " must not be negative, got " + std::to_string(v));
  return static_cast<std::uint64_t>(v);
}

}  // namespace

void register_notify(py::module_& m, py::class_<Window>& cls) {
  (void)m;
  cls.def(
         "_notify",
         guard([](Window& w, py::handle rank, py::handle index, bool want_request) -> py::object {
           const int target = rank_arg(rank);
           const std::uint64_t i = count_arg(index, "notification_idx");
           Request req;
           {
             py::gil_scoped_release nogil;
             w.notify(target, i, want_request ? &req : nullptr);
           }
           return want_request ? py::cast(std::move(req)) : py::none();
         }),
         py::arg("target"), py::arg("notification_idx"), py::arg("want_request") = false)
      .def_property_readonly("_notifications", guard(&Window::notifications))
      .def_property_readonly("_notification_mechanism", guard(&Window::notification_mechanism))
      .def("_notify_value",
           guard([](Window& w, py::handle index) { return w.notify_value(count_arg(index, "notification_idx")); }))
      .def("_set_notify_value", guard([](Window& w, py::handle index, py::handle value) {
             return w.set_notify_value(count_arg(index, "notification_idx"), count_arg(value, "value"));
           }))
      .def("_test_notify", guard([](Window& w, py::handle index, py::handle value) {
             const std::uint64_t i = count_arg(index, "notification_idx"), v = count_arg(value, "value");
             py::gil_scoped_release nogil;
             return w.test_notify(i, v);
           }))
      .def("_wait_notify", guard([](Window& w, py::handle index, py::handle value) {
             const std::uint64_t i = count_arg(index, "notification_idx"), v = count_arg(value, "value");
             py::gil_scoped_release nogil;
             w.wait_notify(i, v);
           }));
}

}  // namespace onesided::python
