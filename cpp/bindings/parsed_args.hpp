// Arguments the Python layer has parsed (python/onesided/_operations.py,
// _window.py), turned into what the core takes: objects exporting the
// buffer protocol into pointers, table codes into Dtype and Op. Every check
// raises an onesided::Error, which module.cpp translates.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <utility>

#include "checked_args.hpp"
#include "onesided/error.hpp"
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

}  // namespace onesided::python
