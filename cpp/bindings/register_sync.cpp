// Synchronisation: fence, passive-target locks, flushes, post/start/
// complete/wait/test, and free. Every call that can wait for another rank
// releases the GIL, so the waiting thread never holds up the others (nor
// the Python side of the bootstrap, which Fence and Free call).

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "registrations.hpp"
#include "checked_args.hpp"
#include "shortcut_args.hpp"
#include "onesided/window.hpp"

namespace onesided::python {

namespace py = pybind11;

namespace {

// Lock, keeping the GIL unless it must wait: an uncontended lock in shared
// memory is granted by begin_lock at once (about 80 ns of GIL release and
// reacquisition saved); a contended one, or one taken by messages, waits
// in end_lock without the GIL, so the holder's threads run meanwhile.
void lock_releasing_gil_to_wait(Window& w, int target, LockType type, unsigned assertion) {
  if (w.begin_lock(target, type, assertion)) return;
  py::gil_scoped_release nogil;
  w.end_lock(target);
}

// Lock's common call in one step: an int rank (not negative), onesided's
// lock type as a plain int (mpi4py's under MPICH: the same numbers) and no
// assertion. Anything else returns false, and the Python layer
// translates and checks it in full (_mpi_args) and calls _lock.
bool lock_shortcut(Window& w, py::handle rank, py::handle type, py::handle assertion) {
  std::int64_t target = 0, t = 0, a = 0;
  if (!shortcut_int(rank, target) || !shortcut_int(type, t) || !shortcut_int(assertion, a)) return false;
  if (target < 0 || target > INT_MAX || a != 0) return false;
  if (t != static_cast<int>(LockType::Exclusive) && t != static_cast<int>(LockType::Shared)) return false;
  lock_releasing_gil_to_wait(w, static_cast<int>(target), static_cast<LockType>(t), 0);
  return true;
}

}  // namespace

void register_sync(py::module_& m, py::class_<Window>& cls) {
  using release = py::call_guard<py::gil_scoped_release>;
  // Calls that take a rank take it as it came from the user and check it
  // (checked_args.hpp) with the GIL held, then release the GIL for the call.
  auto on_rank = [](void (Window::*call)(int)) {
    return guard([call](Window& w, py::handle rank) {
      const int target = rank_arg(rank, "rank");
      py::gil_scoped_release nogil;
      (w.*call)(target);
    });
  };
  cls.def("_fence", guard(&Window::fence), py::arg("assertion") = 0, release())
      .def(
          "_lock",
          guard([](Window& w, py::handle rank, int type, unsigned assertion) {
            const int target = rank_arg(rank, "rank");
            if (type != static_cast<int>(LockType::Exclusive) && type != static_cast<int>(LockType::Shared))
              raise(ErrorCategory::Argument, "lock_type must be LOCK_EXCLUSIVE or LOCK_SHARED");
            lock_releasing_gil_to_wait(w, target, static_cast<LockType>(type), assertion);
          }))
      .def("_lock_shortcut",
           [](py::handle self, py::handle rank, py::handle type, py::handle assertion) {
             return lock_shortcut(checked(self), rank, type, assertion);
           })
      // Lock as the Python Window binds it on the instance (Window._make):
      // the common call in one step with no Python frame in between (about
      // a tenth of an uncontended Lock + op + Unlock); anything else goes to
      // the Python layer's full translation and checks.
      .def(
          "_lock_inline",
          [](py::handle self, py::handle rank, py::handle type, py::handle assertion) {
            if (!lock_shortcut(checked(self), rank, type, assertion))
              self.attr("_lock_translated")(rank, type, assertion);
          },
          py::arg("rank"), py::arg("lock_type") = static_cast<int>(LockType::Exclusive), py::arg("assertion") = 0)
      .def("_unlock", on_rank(&Window::unlock))
      .def("_lock_all", guard(&Window::lock_all), py::arg("assertion") = 0, release())
      .def("_unlock_all", guard(&Window::unlock_all), release())
      .def("_flush", on_rank(&Window::flush))
      // For windows whose operations all complete in their calls
      // (Window::completes_in_call), where Flush is a fence and never waits:
      // keeping the GIL saves its release and reacquisition (about 80 ns of
      // a 0.25 us call, measured). The Python Window binds it as Flush, so
      // it takes the user's rank as given.
      .def("_flush_inline", guard([](Window& w, py::handle rank) { w.flush(rank_arg(rank, "rank")); }),
           py::arg("rank"))
      // Unlock on those windows, where the flush is a fence and the lock's
      // release two atomic instructions (and a wake-up of sleeping waiters).
      .def("_unlock_inline", guard([](Window& w, py::handle rank) { w.unlock(rank_arg(rank, "rank")); }),
           py::arg("rank"))
      .def("_flush_all", guard(&Window::flush_all), release())
      .def("_flush_local", on_rank(&Window::flush_local))
      .def("_flush_local_all", guard(&Window::flush_local_all), release())
      // The awaitable flushes' Requests (python/onesided/_aio.py); in nasty
      // mode making one issues the held operations, so without the GIL.
      .def("_flush_request", guard([](Window& w, py::handle rank) {
             const int target = rank_arg(rank, "rank");
             py::gil_scoped_release nogil;
             return w.flush_request(target);
           }))
      .def("_flush_all_request", guard(&Window::flush_all_request), release())
      // A memory barrier: never waits.
      .def("_sync", guard(&Window::sync))
      .def("_post", guard(&Window::post), py::arg("group"), py::arg("assertion") = 0, release())
      .def("_start", guard(&Window::start), py::arg("group"), py::arg("assertion") = 0, release())
      .def("_complete", guard(&Window::complete), release())
      .def("_wait", guard(&Window::wait), release())
      .def("_test", guard(&Window::test), release())
      .def("_free", guard(&Window::free), release());

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
