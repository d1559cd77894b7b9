// The per-call fast path of the bindings: plain C-contiguous numpy arrays
// of a supported dtype, int ranks and displacements, and onesided's own op
// codes (and mpi4py ops the Python layer has once translated) are
// recognised here in a few C-API calls. Anything else (tuples with counts,
// memoryviews, mpi4py datatypes) makes the call return false, and the Python
// layer parses it in full.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "onesided/types.hpp"

namespace onesided::python {

namespace py = pybind11;

struct FastArray {
  void* ptr = nullptr;
  std::size_t count = 0;
  Dtype dtype{};
};

// numpy type number -> onesided dtype (-1: none), filled once at import.
inline std::array<int, 64>& dtype_of_typenum() {
  static std::array<int, 64> table = [] {
    std::array<int, 64> t;
    t.fill(-1);
    for (const auto& d : kDtypes) {
      const int num = py::dtype(std::string(d.name)).num();
      if (num >= 0 && num < 64) t[static_cast<std::size_t>(num)] = static_cast<int>(d.id);
    }
    return t;
  }();
  return table;
}

inline bool fast_array(py::handle h, bool writable, FastArray& out) {
  auto& api = py::detail::npy_api::get();
  if (!api.PyArray_Check_(h.ptr())) return false;
  auto* a = reinterpret_cast<py::detail::PyArray_Proxy*>(h.ptr());
  constexpr int kCContiguous = py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_;
  constexpr int kWriteable = py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  if (!(a->flags & kCContiguous) || (writable && !(a->flags & kWriteable))) return false;
  const int num = py::detail::array_descriptor_proxy(a->descr)->type_num;
  if (num < 0 || num >= 64) return false;
  const int code = dtype_of_typenum()[static_cast<std::size_t>(num)];
  if (code < 0) return false;
  // Byte order: numpy's native types only (a swapped dtype has another descr
  // but the same type number).
  if (py::detail::array_descriptor_proxy(a->descr)->byteorder == '>') return false;
  std::size_t n = 1;
  for (int i = 0; i < a->nd; ++i) n *= static_cast<std::size_t>(a->dimensions[i]);
  out = {a->data, n, static_cast<Dtype>(code)};
  return true;
}

inline bool fast_int(py::handle h, std::int64_t& out) {
  if (!PyLong_CheckExact(h.ptr())) return false;
  int overflow = 0;
  out = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
  return !overflow && !(out == -1 && PyErr_Occurred());
}

// Foreign op objects (mpi4py's MPI.SUM, ...) the Python layer translated
// once, by identity; each holds a reference, so an address is never reused.
// Bounded: ops made afresh per call just stay on the slow path.
inline std::vector<std::pair<PyObject*, Op>>& known_ops() {
  static std::vector<std::pair<PyObject*, Op>> ops;
  return ops;
}

inline void remember_op(py::handle h, Op op) {
  auto& ops = known_ops();
  if (ops.size() >= 64) return;
  for (auto& [obj, code] : ops)
    if (obj == h.ptr()) return;
  ops.emplace_back(h.inc_ref().ptr(), op);
}

// onesided.Op is an IntEnum: any int subclass below the op count.
inline bool fast_op(py::handle h, Op& out) {
  if (!PyLong_Check(h.ptr())) {
    for (auto& [obj, code] : known_ops())
      if (obj == h.ptr()) {
        out = code;
        return true;
      }
    return false;
  }
  const long v = PyLong_AsLong(h.ptr());
  if (v < 0 || v >= static_cast<long>(kNumOps)) {
    PyErr_Clear();
    return false;
  }
  out = static_cast<Op>(v);
  return true;
}

}  // namespace onesided::python
