// Synchronisation: fence, passive-target locks, flushes, post/start/
// complete/wait/test, and free. Every call that can wait for another rank
// releases the GIL, so the waiting thread never holds up the others (nor
// the Python side of the bootstrap, which Fence and Free call).

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "registrations.hpp"
#include "checked_args.hpp"
#include "shortcut_args.hpp"
#include "direct_forms.hpp"
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

// The direct forms of Lock, Flush and Unlock (direct_forms.hpp). Flush and
// Unlock are bound only on windows whose operations complete in their call,
// where Flush is a fence and Unlock's release never waits: they keep the
// GIL. A rank that is not a plain non-negative int goes to the class's
// method (mpi4py's PROC_NULL, bad input).
bool plain_rank(PyObject* h, int& out) {
  std::int64_t r = 0;
  if (!shortcut_int(h, r) || r < 0 || r > INT_MAX) return false;
  out = static_cast<int>(r);
  return true;
}
struct LockDirect {
  static constexpr const char* method = "Lock";
  static constexpr std::array<const char*, 3> params{"rank", "lock_type", "assertion"};
  static constexpr const char* doc = "Lock(rank, lock_type=LOCK_EXCLUSIVE, assertion=0): see Window.Lock.";
  static bool take(PyObject* self, std::array<PyObject*, 3>& a) {
    static PyObject* exclusive = PyLong_FromLong(static_cast<long>(LockType::Exclusive));
    return a[0] && lock_shortcut(checked(self), a[0], a[1] ? a[1] : exclusive, a[2] ? a[2] : fast::zero());
  }
};
// Flush and Unlock: `name(rank)`, the core's `call` on a plain rank. With
// kKept, bound to (window, kept): then, as the class's methods do, the
// buffers the window keeps for operations to `rank` go once they completed
// (a staged Get's result on the cross-memory path).
template <void (Window::*call)(int), bool kKeeps>
struct RankDirect {
  static constexpr bool kKept = kKeeps;
  static constexpr std::array<const char*, 1> params{"rank"};
  static bool take(PyObject* self, std::array<PyObject*, 1>& a) {
    int rank = 0;
    if (!a[0] || !plain_rank(a[0], rank)) return false;
    (checked(direct::window_of<RankDirect>(self)).*call)(rank);
    if constexpr (kKeeps) {
      PyObject* kept = PyTuple_GET_ITEM(self, 1);
      const int has = PyDict_Contains(kept, a[0]);
      if (has < 0 || (has == 1 && PyDict_DelItem(kept, a[0]) != 0)) throw py::error_already_set();
    }
    return true;
  }
};
template <bool kKeeps>
struct FlushDirect : RankDirect<&Window::flush, kKeeps> {
  static constexpr const char* method = "Flush";
  static constexpr const char* doc = "Flush(rank): see Window.Flush.";
};
template <bool kKeeps>
struct UnlockDirect : RankDirect<&Window::unlock, kKeeps> {
  static constexpr const char* method = "Unlock";
  static constexpr const char* doc = "Unlock(rank): see Window.Unlock.";
};

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
      .def("_unlock", on_rank(&Window::unlock))
      .def("_lock_all", guard(&Window::lock_all), py::arg("assertion") = 0, release())
      .def("_unlock_all", guard(&Window::unlock_all), release())
      .def("_flush", on_rank(&Window::flush))
      .def("_flush_all", guard(&Window::flush_all), release())
      .def("_flush_local", on_rank(&Window::flush_local))
      .def("_flush_local_all", guard(&Window::flush_local_all), release())
      // The awaitable flushes' Requests (python/onesided/window/_aio.py); in nasty
      // mode making one issues the held operations, so without the GIL.
      .def("_flush_request", guard([](Window& w, py::handle rank) {
             const int target = rank_arg(rank, "rank");
             py::gil_scoped_release nogil;
             return w.flush_request(target);
           }))
      .def("_flush_all_request", guard(&Window::flush_all_request), release())
      // A memory barrier (on provider paths also one poll of the transport,
      // which does not wait for another thread's): never waits.
      .def("_sync", guard(&Window::sync))
      .def("_post", guard(&Window::post), py::arg("group"), py::arg("assertion") = 0, release())
      .def("_start", guard(&Window::start), py::arg("group"), py::arg("assertion") = 0, release())
      .def("_complete", guard(&Window::complete), release())
      .def("_wait", guard(&Window::wait), release())
      .def("_test", guard(&Window::test), release())
      .def("_free", guard(&Window::free), release());

  // Lock, Flush and Unlock bound to `window` (direct_forms.hpp); the Python
  // Window binds Lock always, the others where its operations complete in
  // their call. With `kept` (the window's _pending), Flush and Unlock drop
  // what it keeps for their rank, as the class's methods do.
  m.def(
      "_direct_sync_forms",
      [](py::handle window, py::object kept) {
        checked(window);
        if (kept.is_none())
          return py::make_tuple(direct_method<LockDirect>(window), direct_method<FlushDirect<false>>(window),
                                direct_method<UnlockDirect<false>>(window));
        if (!PyDict_CheckExact(kept.ptr())) throw py::type_error("kept must be a dict");
        return py::make_tuple(direct_method<LockDirect>(window), direct_method_keeping<FlushDirect<true>>(window, kept),
                              direct_method_keeping<UnlockDirect<true>>(window, kept));
      },
      py::arg("window"), py::arg("kept") = py::none());
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
