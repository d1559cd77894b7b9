// Thin bindings for onesided::Window. Argument parsing (buffer specs, target
// tuples, mpi4py constants) happens in python/onesided/_window.py; here we
// only extract pointers, check sizes, and release the GIL around blocking calls.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

#include "bootstrap_py.hpp"
#include "fast_args.hpp"
#include "onesided/error.hpp"
#include "onesided/window.hpp"

namespace py = pybind11;

namespace onesided::python {
namespace {

// Pointer to a contiguous buffer of at least `bytes` bytes. The Python layer
// keeps the object alive until the operation completes.
void* buffer_ptr(const py::handle& obj, std::size_t bytes, bool writable, const char* what) {
  if (obj.is_none()) {
    if (bytes == 0) return nullptr;
    raise(ErrorCategory::Argument, std::string(what) + " buffer is required");
  }
  Py_buffer view;
  int flags = PyBUF_ANY_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(obj.ptr(), &view, flags) != 0) {
    PyErr_Clear();
    raise(ErrorCategory::Argument,
          std::string(what) + (writable ? " must be a writable contiguous buffer"
                                        : " must be a contiguous buffer"));
  }
  void* p = view.buf;
  const auto len = static_cast<std::size_t>(view.len);
  PyBuffer_Release(&view);
  if (len < bytes)
    raise(ErrorCategory::Argument, std::string(what) + " buffer holds " + std::to_string(len) +
                                       " bytes, the operation needs " + std::to_string(bytes));
  return p;
}

Dtype to_dtype(int code) {
  if (code < 0 || code >= static_cast<int>(kNumDtypes)) raise(ErrorCategory::Argument, "bad dtype code");
  return static_cast<Dtype>(code);
}
Op to_op(int code) {
  if (code < 0 || code >= static_cast<int>(kNumOps)) raise(ErrorCategory::Argument, "bad op code");
  return static_cast<Op>(code);
}

std::size_t nbytes(std::size_t count, int dtype) { return count * dtype_info(to_dtype(dtype)).size; }

}  // namespace

void register_window(py::module_& m) {
  using release = py::call_guard<py::gil_scoped_release>;

  // The Python Window subclasses this class, so the window itself exports
  // its memory through the buffer protocol (np.frombuffer(win, ...)).
  py::class_<Window>(m, "Window", py::buffer_protocol())
      // `memory`: the buffer to expose (Create), the size in bytes
      // (Allocate, Allocate_shared), or None (Create_dynamic).
      .def(py::init([](py::object memory, int disp_unit, const Info& info, py::object comm, int flavor) {
             auto group = std::make_shared<PyBootstrap>(std::move(comm));
             if (flavor == static_cast<int>(Flavor::Shared))
               return Window::allocate_shared(memory.cast<std::size_t>(), disp_unit, info, std::move(group));
             if (flavor == static_cast<int>(Flavor::Dynamic)) return Window::create_dynamic(info, std::move(group));
             if (flavor == static_cast<int>(Flavor::Allocate) && py::isinstance<py::int_>(memory))
               return Window::allocate(memory.cast<std::size_t>(), disp_unit, info, std::move(group));
             Py_buffer view;
             if (PyObject_GetBuffer(memory.ptr(), &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0) {
               PyErr_Clear();
               raise(ErrorCategory::Argument, "window memory must be a writable C-contiguous buffer");
             }
             void* base = view.buf;
             const auto size = static_cast<std::size_t>(view.len);
             PyBuffer_Release(&view);
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
      .def("_info", &Window::info)
      .def("_size_of", &Window::size_of)
      .def("_disp_unit_of", &Window::disp_unit_of)
      // The R* forms pass want_request and get a Request back (else None).
      .def(
          "_put",
          [](Window& w, py::handle origin, std::size_t count, int dtype, int target, std::int64_t disp,
             bool want_request) -> py::object {
            Request req;
            w.put(buffer_ptr(origin, nbytes(count, dtype), false, "origin"), count, to_dtype(dtype), target, disp,
                  want_request ? &req : nullptr);
            return want_request ? py::cast(req) : py::none();
          },
          py::arg("origin"), py::arg("count"), py::arg("dtype"), py::arg("target"), py::arg("disp"),
          py::arg("want_request") = false)
      .def(
          "_get",
          [](Window& w, py::handle result, std::size_t count, int dtype, int target, std::int64_t disp,
             bool want_request) -> py::object {
            Request req;
            w.get(buffer_ptr(result, nbytes(count, dtype), true, "result"), count, to_dtype(dtype), target, disp,
                  want_request ? &req : nullptr);
            return want_request ? py::cast(req) : py::none();
          },
          py::arg("result"), py::arg("count"), py::arg("dtype"), py::arg("target"), py::arg("disp"),
          py::arg("want_request") = false)
      .def(
          "_accumulate",
          [](Window& w, py::handle origin, std::size_t count, int dtype, int target, std::int64_t disp, int op,
             bool want_request) -> py::object {
            Request req;
            w.accumulate(buffer_ptr(origin, nbytes(count, dtype), false, "origin"), count, to_dtype(dtype),
                         target, disp, to_op(op), want_request ? &req : nullptr);
            return want_request ? py::cast(req) : py::none();
          },
          py::arg("origin"), py::arg("count"), py::arg("dtype"), py::arg("target"), py::arg("disp"),
          py::arg("op"), py::arg("want_request") = false)
      .def(
          "_get_accumulate",
          [](Window& w, py::handle origin, py::handle result, std::size_t count, int dtype, int target,
             std::int64_t disp, int op, bool want_request) -> py::object {
            const std::size_t n = nbytes(count, dtype);
            const void* o = op == static_cast<int>(Op::NoOp) ? nullptr : buffer_ptr(origin, n, false, "origin");
            Request req;
            w.get_accumulate(o, buffer_ptr(result, n, true, "result"), count, to_dtype(dtype), target, disp,
                             to_op(op), want_request ? &req : nullptr);
            return want_request ? py::cast(req) : py::none();
          },
          py::arg("origin"), py::arg("result"), py::arg("count"), py::arg("dtype"), py::arg("target"),
          py::arg("disp"), py::arg("op"), py::arg("want_request") = false)
      // Fast forms for plain arrays (see fast_args.hpp): True when done,
      // False when the Python layer must parse the arguments itself.
      .def("_put_fast",
           [](Window& w, py::handle origin, py::handle target, py::handle disp) {
             FastArray o;
             std::int64_t t, d;
             if (!fast_array(origin, false, o) || !fast_int(target, t) || !fast_int(disp, d)) return false;
             w.put(o.ptr, o.count, o.dtype, static_cast<int>(t), d);
             return true;
           })
      .def("_get_fast",
           [](Window& w, py::handle result, py::handle target, py::handle disp) {
             FastArray r;
             std::int64_t t, d;
             if (!fast_array(result, true, r) || !fast_int(target, t) || !fast_int(disp, d)) return false;
             w.get(r.ptr, r.count, r.dtype, static_cast<int>(t), d);
             return true;
           })
      .def("_accumulate_fast",
           [](Window& w, py::handle origin, py::handle target, py::handle disp, py::handle op) {
             FastArray o;
             std::int64_t t, d;
             Op code;
             if (!fast_array(origin, false, o) || !fast_int(target, t) || !fast_int(disp, d) || !fast_op(op, code))
               return false;
             w.accumulate(o.ptr, o.count, o.dtype, static_cast<int>(t), d, code);
             return true;
           })
      .def("_get_accumulate_fast",
           [](Window& w, py::handle origin, py::handle result, py::handle target, py::handle disp, py::handle op) {
             FastArray o, r;
             std::int64_t t, d;
             Op code;
             if (!fast_array(origin, false, o) || !fast_array(result, true, r) || o.dtype != r.dtype ||
                 o.count != r.count || !fast_int(target, t) || !fast_int(disp, d) || !fast_op(op, code))
               return false;
             w.get_accumulate(o.ptr, r.ptr, r.count, r.dtype, static_cast<int>(t), d, code);
             return true;
           })
      .def("_fetch_and_op_fast",
           [](Window& w, py::handle origin, py::handle result, py::handle target, py::handle disp, py::handle op) {
             FastArray o, r;
             std::int64_t t, d;
             Op code;
             if (!fast_array(origin, false, o) || !fast_array(result, true, r) || o.dtype != r.dtype ||
                 o.count < 1 || r.count < 1 || !fast_int(target, t) || !fast_int(disp, d) || !fast_op(op, code))
               return false;
             w.fetch_and_op(o.ptr, r.ptr, r.dtype, static_cast<int>(t), d, code);
             return true;
           })
      .def("_compare_and_swap_fast",
           [](Window& w, py::handle origin, py::handle compare, py::handle result, py::handle target,
              py::handle disp) {
             FastArray o, c, r;
             std::int64_t t, d;
             if (!fast_array(origin, false, o) || !fast_array(compare, false, c) || !fast_array(result, true, r) ||
                 o.dtype != r.dtype || c.dtype != r.dtype || o.count < 1 || c.count < 1 || r.count < 1 ||
                 !fast_int(target, t) || !fast_int(disp, d))
               return false;
             w.compare_and_swap(o.ptr, c.ptr, r.ptr, r.dtype, static_cast<int>(t), d);
             return true;
           })
      .def("_rmw_fast",
           [](Window& w, py::handle origin, py::handle result, py::handle target, py::handle disp, py::handle op) {
             FastArray o, r;
             std::int64_t t, d;
             Op code;
             if (!fast_array(result, true, r) || !fast_int(target, t) || !fast_int(disp, d) || !fast_op(op, code))
               return false;
             const bool inc = code == Op::Inc && origin.is_none();
             if (!inc && (!fast_array(origin, false, o) || o.dtype != r.dtype || o.count != r.count)) return false;
             py::gil_scoped_release nogil;  // as _rmw: the call may wait
             w.rmw(code, inc ? nullptr : o.ptr, r.ptr, r.count, r.dtype, static_cast<int>(t), d);
             return true;
           })
      .def("_rmw2_fast",
           [](Window& w, py::handle origin, py::handle origin2, py::handle result, py::handle target,
              py::handle disp, py::handle op) {
             FastArray o, o2, r;
             std::int64_t t, d;
             Op code;
             if (!fast_array(origin, false, o) || !fast_array(origin2, false, o2) || !fast_array(result, true, r) ||
                 o.dtype != r.dtype || o2.dtype != r.dtype || o.count != r.count || o2.count != r.count ||
                 !fast_int(target, t) || !fast_int(disp, d) || !fast_op(op, code))
               return false;
             py::gil_scoped_release nogil;
             w.rmw2(code, o.ptr, o2.ptr, r.ptr, r.count, r.dtype, static_cast<int>(t), d);
             return true;
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
             Py_buffer view;
             if (PyObject_GetBuffer(memory.ptr(), &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0) {
               PyErr_Clear();
               raise(ErrorCategory::Argument, "Attach: memory must be a writable C-contiguous buffer");
             }
             void* base = view.buf;
             const auto size = static_cast<std::size_t>(view.len);
             PyBuffer_Release(&view);
             w.attach(base, size);
           })
      .def("_detach", [](Window& w, std::uintptr_t address) { w.detach(reinterpret_cast<const void*>(address)); })
      .def("_post", &Window::post, py::arg("group"), py::arg("assertion") = 0, release())
      .def("_start", &Window::start, py::arg("group"), py::arg("assertion") = 0, release())
      .def("_complete", &Window::complete, release())
      .def("_wait", &Window::wait, release())
      .def("_test", &Window::test, release())
      .def("_fetch_and_op",
           [](Window& w, py::handle origin, py::handle result, int dtype, int target, std::int64_t disp,
              int op) {
             const std::size_t n = nbytes(1, dtype);
             const void* o = op == static_cast<int>(Op::NoOp) ? nullptr : buffer_ptr(origin, n, false, "origin");
             w.fetch_and_op(o, buffer_ptr(result, n, true, "result"), to_dtype(dtype), target, disp, to_op(op));
           })
      .def("_compare_and_swap",
           [](Window& w, py::handle origin, py::handle compare, py::handle result, int dtype, int target,
              std::int64_t disp) {
             const std::size_t n = nbytes(1, dtype);
             w.compare_and_swap(buffer_ptr(origin, n, false, "origin"), buffer_ptr(compare, n, false, "compare"),
                                buffer_ptr(result, n, true, "result"), to_dtype(dtype), target, disp);
           })
      .def("_rmw",
           [](Window& w, int op, py::handle origin, py::handle result, std::size_t count, int dtype, int target,
              std::int64_t disp, unsigned assertion, bool want_request) {
             const std::size_t n = nbytes(count, dtype);
             const void* o = op_info(to_op(op)).operands >= 1 ? buffer_ptr(origin, n, false, "origin") : nullptr;
             void* r = buffer_ptr(result, n, true, "result");
             Request req;
             // An implicit epoch blocks (lock, op, unlock): no GIL meanwhile.
             py::gil_scoped_release nogil;
             w.rmw(to_op(op), o, r, count, to_dtype(dtype), target, disp, assertion, want_request ? &req : nullptr);
             return req;
           })
      .def("_rmw2",
           [](Window& w, int op, py::handle origin, py::handle origin2, py::handle result, std::size_t count,
              int dtype, int target, std::int64_t disp, unsigned assertion, bool want_request) {
             const std::size_t n = nbytes(count, dtype);
             const void* o = buffer_ptr(origin, n, false, "origin");
             const void* o2 = buffer_ptr(origin2, n, false, "origin2");
             void* r = buffer_ptr(result, n, true, "result");
             Request req;
             py::gil_scoped_release nogil;
             w.rmw2(to_op(op), o, o2, r, count, to_dtype(dtype), target, disp, assertion,
                    want_request ? &req : nullptr);
             return req;
           })
      .def("_native_atomics", [](const Window& w, int dtype) { return w.native_atomics(to_dtype(dtype)); })
      .def("_atomics_reason", [](const Window& w, int dtype) { return w.atomics_reason(to_dtype(dtype)); })
      .def("_native_count",
           [](const Window& w, int function, int op, int dtype) {
             if (function < 0 || function >= static_cast<int>(kNumFunctions))
               raise(ErrorCategory::Argument, "bad function code");
             return w.native_count(static_cast<Function>(function), to_op(op), to_dtype(dtype));
           })
      .def("_fence", &Window::fence, py::arg("assertion") = 0, release())
      .def(
          "_lock", [](Window& w, int target, int type, unsigned assertion) {
            w.lock(target, static_cast<LockType>(type), assertion);
          },
          release())
      .def("_unlock", &Window::unlock, release())
      .def("_lock_all", &Window::lock_all, py::arg("assertion") = 0, release())
      .def("_unlock_all", &Window::unlock_all, release())
      .def("_flush", &Window::flush, release())
      // For windows whose operations all complete in their calls (the fast
      // path without nasty mode), where Flush is a fence and never waits:
      // keeping the GIL saves its release and reacquisition (about 80 ns
      // of a 0.25 us call, measured).
      .def("_flush_inline", &Window::flush, py::arg("rank"))
      .def("_flush_all", &Window::flush_all, release())
      .def("_flush_local", &Window::flush_local, release())
      .def("_flush_local_all", &Window::flush_local_all, release())
      .def("_sync", &Window::sync)
      .def("_free", &Window::free, release());

  py::class_<Request>(m, "Request")
      .def("_wait", &Request::wait, release())
      .def("_test", &Request::test, release());

  m.attr("MODE_PASSIVE_EPOCH_IMPLICIT") = mode::kPassiveEpochImplicit;
  m.attr("LOCK_EXCLUSIVE") = static_cast<int>(LockType::Exclusive);
  m.attr("LOCK_SHARED") = static_cast<int>(LockType::Shared);
  m.attr("MODE_NOCHECK") = mode::kNoCheck;
  m.attr("MODE_NOSTORE") = mode::kNoStore;
  m.attr("MODE_NOPUT") = mode::kNoPut;
  m.attr("MODE_NOPRECEDE") = mode::kNoPrecede;
  m.attr("MODE_NOSUCCEED") = mode::kNoSucceed;
  m.attr("FLAVOR_CREATE") = static_cast<int>(Flavor::Create);
  m.attr("FLAVOR_ALLOCATE") = static_cast<int>(Flavor::Allocate);
  m.attr("FLAVOR_DYNAMIC") = static_cast<int>(Flavor::Dynamic);
  m.attr("FLAVOR_SHARED") = static_cast<int>(Flavor::Shared);
  m.attr("WIN_SEPARATE") = static_cast<int>(Model::Separate);
  m.attr("WIN_UNIFIED") = static_cast<int>(Model::Unified);
  m.attr("PROC_NULL") = kProcNull;
}

}  // namespace onesided::python
