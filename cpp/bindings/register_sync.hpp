// Synchronisation: fence, passive-target locks, flushes, post/start/
// complete/wait/test, and free. Every call that can wait for another rank
// releases the GIL, so the waiting thread never holds up the others (nor
// the Python side of the bootstrap, which Fence and Free call).
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "onesided/window.hpp"

namespace onesided::python {

namespace py = pybind11;

inline void register_sync(py::module_& m, py::class_<Window>& cls) {
  using release = py::call_guard<py::gil_scoped_release>;
  cls.def("_fence", &Window::fence, py::arg("assertion") = 0, release())
      .def(
          "_lock",
          [](Window& w, int target, int type, unsigned assertion) {
            w.lock(target, static_cast<LockType>(type), assertion);
          },
          release())
      .def("_unlock", &Window::unlock, release())
      .def("_lock_all", &Window::lock_all, py::arg("assertion") = 0, release())
      .def("_unlock_all", &Window::unlock_all, release())
      .def("_flush", &Window::flush, release())
      // For windows whose operations all complete in their calls
      // (Window::completes_in_call), where Flush is a fence and never waits:
      // keeping the GIL saves its release and reacquisition (about 80 ns of
      // a 0.25 us call, measured).
      .def("_flush_inline", &Window::flush, py::arg("rank"))
      .def("_flush_all", &Window::flush_all, release())
      .def("_flush_local", &Window::flush_local, release())
      .def("_flush_local_all", &Window::flush_local_all, release())
      // A memory barrier: never waits.
      .def("_sync", &Window::sync)
      .def("_post", &Window::post, py::arg("group"), py::arg("assertion") = 0, release())
      .def("_start", &Window::start, py::arg("group"), py::arg("assertion") = 0, release())
      .def("_complete", &Window::complete, release())
      .def("_wait", &Window::wait, release())
      .def("_test", &Window::test, release())
      .def("_free", &Window::free, release());

  m.attr("MODE_PASSIVE_EPOCH_IMPLICIT") = mode::kPassiveEpochImplicit;
  m.attr("LOCK_EXCLUSIVE") = static_cast<int>(LockType::Exclusive);
  m.attr("LOCK_SHARED") = static_cast<int>(LockType::Shared);
  m.attr("MODE_NOCHECK") = mode::kNoCheck;
  m.attr("MODE_NOSTORE") = mode::kNoStore;
  m.attr("MODE_NOPUT") = mode::kNoPut;
  m.attr("MODE_NOPRECEDE") = mode::kNoPrecede;
  m.attr("MODE_NOSUCCEED") = mode::kNoSucceed;
}

}  // namespace onesided::python
