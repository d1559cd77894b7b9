// Arguments the Python layer has parsed (python/onesided/window/_operations.py,
// _window.py), turned into what the core takes: objects exporting the
// buffer protocol into pointers, table codes into Dtype and Op. Every check
// raises an onesided::Error, which module.cpp translates.
#pragma once

#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checked_args.hpp"
#include "onesided/error.hpp"
#include "onesided/layout.hpp"
#include "onesided/types.hpp"

namespace onesided::python {

namespace py = pybind11;

// Pointer to a contiguous buffer of at least `bytes` bytes. The Python layer
// keeps the object alive until the operation completes.
inline void* buffer_ptr(const py::handle& obj, std::size_t bytes, bool writable, const char* what) {
  if (obj.is_none()) {
    if (bytes == 0) return nullptr;
    raise(kArgumentType, std::string(what) + " buffer is required");
  }
  Py_buffer view;
  int flags = PyBUF_ANY_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(obj.ptr(), &view, flags) != 0) {
    PyErr_Clear();
    raise(PyObject_CheckBuffer(obj.ptr()) ? kBufferArgument : kArgumentType,
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

// [base, base + size) of a writable C-contiguous buffer (window memory, an
// Attach). The Python layer keeps the object alive while the window exposes it.
inline std::pair<void*, std::size_t> writable_region(py::handle memory, const char* error) {
  Py_buffer view;
  if (PyObject_GetBuffer(memory.ptr(), &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0) {
    PyErr_Clear();
    raise(PyObject_CheckBuffer(memory.ptr()) ? kBufferArgument : kArgumentType, error);
  }
  std::pair<void*, std::size_t> region{view.buf, static_cast<std::size_t>(view.len)};
  PyBuffer_Release(&view);
  return region;
}

inline Dtype to_dtype(int code) {
  if (code < 0 || code >= static_cast<int>(kNumDtypes)) raise(ErrorCategory::Argument, "bad dtype code");
  return static_cast<Dtype>(code);
}
inline Op to_op(int code) {
  if (code < 0 || code >= static_cast<int>(kNumOps)) raise(ErrorCategory::Argument, "bad op code");
  return static_cast<Op>(code);
}

inline std::size_t nbytes(std::size_t count, int dtype) { return count * dtype_info(to_dtype(dtype)).size; }

// A buffer as the non-contiguous calls take it: the address of its first
// element, which layout offsets count from, and the layout of the elements
// the call touches in it.
struct Operand {
  std::byte* first = nullptr;
  // None: the call's elements lie contiguous from `first` (the common
  // case, which then builds no Layout).
  std::optional<Layout> layout;

  bool contiguous() const { return !layout || layout->is_contiguous(); }
  Layout layout_of(Dtype d, std::size_t count) const { return layout ? *layout : Layout::contiguous(d, count); }
};

// `count` elements of `dtype` in `obj`: where `given` says (every byte of
// it inside the memory the buffer spans) or, without a layout, the
// buffer's own elements: from its start when it is contiguous, else in C
// order (numpy's strided views; the buffer's items must then be elements
// of `dtype`, `count` of them). The Python layer keeps `obj` alive until
// the operation completes.
inline Operand operand(const py::handle& obj, std::size_t count, int dtype, const Layout* given, bool writable,
                       const char* what) {
  const Dtype d = to_dtype(dtype);
  const std::size_t itemsize = dtype_info(d).size;
  if (obj.is_none()) {
    if (count == 0) return {nullptr, std::nullopt};
    raise(kArgumentType, std::string(what) + " buffer is required");
  }
  Py_buffer view;
  if (PyObject_GetBuffer(obj.ptr(), &view, PyBUF_STRIDES | (writable ? PyBUF_WRITABLE : 0)) != 0) {
    PyErr_Clear();
    raise(PyObject_CheckBuffer(obj.ptr()) ? kBufferArgument : kArgumentType,
          std::string(what) + (writable ? " must be a writable buffer" : " must be a buffer"));
  }
  // The bytes the buffer spans, relative to its first element, and its own layout.
  Operand out{static_cast<std::byte*>(view.buf), std::nullopt};
  std::int64_t lo = 0, hi = static_cast<std::int64_t>(view.len);
  const bool contiguous = PyBuffer_IsContiguous(&view, 'A');
  std::vector<std::uint64_t> shape;
  std::vector<std::int64_t> strides;
  if (!contiguous) {
    hi = view.itemsize;
    for (int i = 0; i < view.ndim; ++i) {
      shape.push_back(static_cast<std::uint64_t>(view.shape[i]));
      strides.push_back(view.strides[i]);
      const std::int64_t span = (view.shape[i] - 1) * view.strides[i];
      (span < 0 ? lo : hi) += span;
    }
  }
  const Py_ssize_t buffer_itemsize = view.itemsize;
  PyBuffer_Release(&view);
  if (given) {
    if (given->dtype() != d || given->count() != count)
      raise(ErrorCategory::Argument, std::string(what) + " layout holds " + std::to_string(given->count()) + " x " +
                                         std::string(dtype_info(given->dtype()).name) + ", the call " +
                                         std::to_string(count) + " x " + std::string(dtype_info(d).name));
    if (given->count() && (given->lo() < lo || given->hi() > hi))
      raise(ErrorCategory::Argument, std::string(what) + " layout reaches bytes [" + std::to_string(given->lo()) +
                                         ", " + std::to_string(given->hi()) + ") of a buffer that spans [" +
                                         std::to_string(lo) + ", " + std::to_string(hi) + ")");
    out.layout = *given;
  } else if (contiguous) {
    if (static_cast<std::size_t>(hi) / itemsize < count)
      raise(ErrorCategory::Argument, std::string(what) + " buffer holds " + std::to_string(hi) +
                                         " bytes, the operation needs " + std::to_string(count) + " x " +
                                         std::to_string(itemsize));
  } else {
    if (static_cast<std::size_t>(buffer_itemsize) != itemsize)
      raise(ErrorCategory::Argument, std::string(what) + " is a strided buffer of " +
                                         std::to_string(buffer_itemsize) + "-byte items, not of " +
                                         std::string(dtype_info(d).name) + " (" + std::to_string(itemsize) +
                                         " bytes): a strided buffer is sent as its own elements");
    out.layout = Layout::strided(d, 0, shape, strides);
    if (out.layout->count() != count)
      raise(ErrorCategory::Argument, std::string(what) + " is a strided buffer of " +
                                         std::to_string(out.layout->count()) + " elements, the call moves " +
                                         std::to_string(count));
  }
  return out;
}

}  // namespace onesided::python
