// Memory from producers numpy does not keep safe for us: DLPack tensors and
// raw addresses handed over by an array interface. The Python side
// (window/buffers: as_array) asks here and gets a numpy array over the
// producer's memory, never a copy.
//
// DLPack (dlpack.hpp has the rules). numpy's own from_dlpack renames the
// capsule and then lets it go: a producer whose capsule owns the managed
// tensor (mpi4py's own test arrays are made so) frees it while numpy still
// points into it, and its deleter later runs on freed memory. Here the
// array's base holds the capsule itself until the deleter has run, so the
// tensor outlives every use of its memory whoever owns it:
//   1. every check runs before anything is taken: a refused capsule keeps
//      its name and its producer's destructor releases it;
//   2. then the capsule is renamed "used_..." and a Hold, the base of the
//      returned array, owns the tensor: its destructor calls the deleter
//      exactly once (with any pending Python exception set aside) and only
//      then drops the capsule. The caller keeps the array (and so the
//      Hold) until the operation that uses the memory has completed.
// What is checked, in that order: __dlpack_device__ (host memory only),
// the object returned (a capsule, named as the protocol says, not used),
// the version, the device in the tensor, ndim, shape, dtype (code, bits,
// lanes), strides and byte_offset (every address computed without
// overflow), NULL data for a non-empty tensor, and that the first and last
// byte lie in mapped memory (mincore). The flags READ_ONLY and IS_COPIED
// make the array read-only: a copy's writes would never reach the producer.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include "checked_args.hpp"
#include "dlpack.hpp"
#include "registrations.hpp"

namespace onesided::python {

namespace {

constexpr const char* kHoldName = "onesided.dlpack_hold";
constexpr int kMaxDims = 32;  // numpy's NPY_MAXDIMS before 2.0; more is never a real tensor

[[noreturn]] void refuse(const std::string& what, const std::string& rule) {
  raise(kBufferArgument, what + ": " + rule);
}

// Owns a taken tensor: see the file's comment, step 2.
struct Hold {
  PyObject* capsule;  // strong reference, dropped after the deleter ran
  void* managed;
  bool versioned;
};

void release_hold(PyObject* cap) {
  auto* h = static_cast<Hold*>(PyCapsule_GetPointer(cap, kHoldName));
  if (!h) {
    PyErr_Clear();
    return;
  }
  // The deleter may be Python code (ctypes): it must not see, nor clear, an
  // exception that is on its way while this base is collected.
  PyObject *type, *value, *trace;
  PyErr_Fetch(&type, &value, &trace);
  if (h->versioned) {
    auto* m = static_cast<dlpack::ManagedTensorVersioned*>(h->managed);
    if (m->deleter) m->deleter(m);
  } else {
    auto* m = static_cast<dlpack::ManagedTensor*>(h->managed);
    if (m->deleter) m->deleter(m);
  }
  Py_XDECREF(h->capsule);
  delete h;
  PyErr_Restore(type, value, trace);
}

bool is_host(std::int64_t device_type) {
  return device_type == dlpack::kCPU || device_type == dlpack::kCUDAHost || device_type == dlpack::kROCMHost;
}

// numpy's name for a DLPack element type, or empty when onesided has none.
std::string dtype_name(const dlpack::DataType& t) {
  if (t.lanes == 2 && t.code == dlpack::kFloat) {  // a complex as two float lanes (mpi4py's long double complex)
    dlpack::DataType c{dlpack::kComplex, static_cast<std::uint8_t>(t.bits * 2), 1};
    return t.bits * 2 > 255 ? (t.bits == 128 ? "clongdouble" : "") : dtype_name(c);
  }
  if (t.lanes != 1) return "";
  switch (t.code) {
    case dlpack::kInt:
    case dlpack::kUInt:
      if (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64)
        return (t.code == dlpack::kInt ? "int" : "uint") + std::to_string(t.bits);
      return "";
    case dlpack::kFloat:
      if (t.bits == 16 || t.bits == 32 || t.bits == 64) return "float" + std::to_string(t.bits);
      if (t.bits == 8 * sizeof(long double)) return "longdouble";
      return "";
    case dlpack::kComplex:
      if (t.bits == 64 || t.bits == 128) return "complex" + std::to_string(t.bits);
      return "";
    case dlpack::kBool:
      return t.bits == 8 ? "bool" : "";
    default:
      return "";
  }
}

bool mapped(std::uintptr_t address) {
  static const long page = sysconf(_SC_PAGESIZE);
  unsigned char resident = 0;
  void* start = reinterpret_cast<void*>(address & ~static_cast<std::uintptr_t>(page - 1));
  return mincore(start, 1, &resident) == 0 || errno != ENOMEM;
}

// Whether [address, address + nbytes) starts and ends in mapped memory.
bool host_memory(std::uintptr_t address, std::uint64_t nbytes) {
  if (nbytes == 0) return true;
  std::uintptr_t last = 0;
  if (__builtin_add_overflow(address, nbytes - 1, &last)) return false;
  return address != 0 && mapped(address) && mapped(last);
}

struct Taken {
  void* managed;
  bool versioned;
  const dlpack::Tensor* tensor;
  bool read_only;
  bool copied;
};

// The capsule's tensor, after the checks that need only the capsule.
Taken open_capsule(py::handle capsule, const std::string& what) {
  if (!PyCapsule_CheckExact(capsule.ptr()))
    raise(kArgumentType, what + ": __dlpack__() must return a PyCapsule, got " + type_name(capsule));
  const char* name = PyCapsule_GetName(capsule.ptr());
  const std::string n = name ? name : "";
  if (n == "used_dltensor" || n == "used_dltensor_versioned")
    refuse(what, "the DLPack capsule was already consumed (named '" + n + "'); a capsule can be taken once");
  if (n != "dltensor" && n != "dltensor_versioned")
    refuse(what, "__dlpack__() returned a capsule named '" + n + "', not 'dltensor' or 'dltensor_versioned'");
  void* p = PyCapsule_GetPointer(capsule.ptr(), name);
  if (!p) {
    PyErr_Clear();
    refuse(what, "the DLPack capsule holds a NULL pointer");
  }
  if (n == "dltensor") return {p, false, &static_cast<dlpack::ManagedTensor*>(p)->dl_tensor, false, false};
  auto* m = static_cast<dlpack::ManagedTensorVersioned*>(p);
  if (m->version.major != dlpack::kMajor)
    refuse(what, "DLPack version " + std::to_string(m->version.major) + "." + std::to_string(m->version.minor) +
                     " was returned, onesided reads 1.x (it asked for max_version (1, 0))");
  return {p, true, &m->dl_tensor, (m->flags & dlpack::kFlagReadOnly) != 0, (m->flags & dlpack::kFlagIsCopied) != 0};
}

struct Shape {
  std::vector<py::ssize_t> dims;
  std::vector<py::ssize_t> strides;  // in bytes
  std::uint64_t nbytes_span = 0;     // bytes from the lowest to one past the highest element
  std::int64_t low = 0;              // the lowest element's byte offset from data + byte_offset
  bool empty = false;
};

Shape tensor_shape(const dlpack::Tensor& t, std::int64_t itemsize, const std::string& what) {
  if (t.ndim < 0) refuse(what, "DLPack ndim is " + std::to_string(t.ndim) + "; it must be >= 0");
  if (t.ndim > kMaxDims) refuse(what, "DLPack ndim " + std::to_string(t.ndim) + " exceeds " + std::to_string(kMaxDims));
  if (t.ndim > 0 && !t.shape) refuse(what, "DLPack shape is NULL for ndim " + std::to_string(t.ndim));
  Shape s;
  std::int64_t high = 0;  // the highest element's byte offset
  std::int64_t c_stride = itemsize;
  s.dims.resize(static_cast<std::size_t>(t.ndim));
  s.strides.resize(static_cast<std::size_t>(t.ndim));
  for (int i = t.ndim - 1; i >= 0; --i) {
    const std::int64_t d = t.shape[i];
    if (d < 0) refuse(what, "DLPack shape[" + std::to_string(i) + "] is " + std::to_string(d) + "; it must be >= 0");
    if (d == 0) s.empty = true;
    std::int64_t stride = c_stride;
    if (t.strides && __builtin_mul_overflow(t.strides[i], itemsize, &stride))
      refuse(what, "DLPack strides[" + std::to_string(i) + "] overflows 64-bit byte offsets");
    s.dims[static_cast<std::size_t>(i)] = d;
    s.strides[static_cast<std::size_t>(i)] = stride;
    std::int64_t reach = 0;
    if (d > 0 && __builtin_mul_overflow(d - 1, stride, &reach))
      refuse(what, "DLPack shape and strides reach beyond 64-bit byte offsets");
    if ((reach > 0 && __builtin_add_overflow(high, reach, &high)) ||
        (reach < 0 && __builtin_add_overflow(s.low, reach, &s.low)))
      refuse(what, "DLPack shape and strides reach beyond 64-bit byte offsets");
    if (d > 0 && __builtin_mul_overflow(c_stride, d, &c_stride))
      refuse(what, "DLPack shape holds more bytes than 64 bits count");
  }
  if (!s.empty) {
    std::int64_t span = 0;
    if (__builtin_sub_overflow(high, s.low, &span) || __builtin_add_overflow(span, itemsize, &span))
      refuse(what, "DLPack shape and strides reach beyond 64-bit byte offsets");
    s.nbytes_span = static_cast<std::uint64_t>(span);
  }
  return s;
}

// The address of the element at byte offset 0, checked: no wrap from data
// through byte_offset to the lowest and highest element.
std::uintptr_t base_address(const dlpack::Tensor& t, const Shape& s, const std::string& what) {
  const auto data = reinterpret_cast<std::uintptr_t>(t.data);
  if (s.empty) return data;
  if (!data) refuse(what, "DLPack data is NULL for a tensor of " + std::to_string(s.nbytes_span) + " bytes");
  std::uintptr_t base = 0, last = 0;
  const std::uintptr_t below = std::uintptr_t{0} - static_cast<std::uintptr_t>(s.low);  // low <= 0
  if (__builtin_add_overflow(data, t.byte_offset, &base) || base < below ||
      __builtin_add_overflow(base - below, s.nbytes_span - 1, &last))
    refuse(what, "DLPack data + byte_offset + strides point outside the address space");
  const std::uintptr_t lowest = base - below;
  if (!host_memory(lowest, s.nbytes_span))
    refuse(what, "DLPack data + byte_offset + strides point to memory that is not mapped in this process");
  return base;
}

py::array dlpack_array(py::handle obj, const std::string& what, bool writable) {
  if (PyObject_HasAttrString(obj.ptr(), "__dlpack_device__")) {
    py::object device = obj.attr("__dlpack_device__")();
    if (!py::isinstance<py::tuple>(device) || py::len(device) != 2)
      raise(kArgumentType, what + ": __dlpack_device__() must return (device_type, device_id)");
    const std::int64_t type = int64_arg(device[py::int_(0)], "__dlpack_device__()[0]");
    if (!is_host(type))
      refuse(what, "a DLPack tensor on device type " + std::to_string(type) + " (onesided reaches host memory only)");
  }
  py::object export_ = obj.attr("__dlpack__");
  py::object capsule;
  try {
    capsule = export_(py::arg("max_version") = py::make_tuple(dlpack::kMajor, 0));
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_TypeError)) throw;
    capsule = export_();  // a producer of DLPack 0.x: no max_version
  }
  const Taken taken = open_capsule(capsule, what);
  const dlpack::Tensor& t = *taken.tensor;
  if (!is_host(t.device.device_type))
    refuse(what, "a DLPack tensor on device type " + std::to_string(t.device.device_type) +
                     " (onesided reaches host memory only)");
  const std::string name = dtype_name(t.dtype);
  if (name.empty())
    raise(ErrorCategory::Unsupported, what + ": DLPack dtype (code " + std::to_string(t.dtype.code) + ", bits " +
                                          std::to_string(t.dtype.bits) + ", lanes " + std::to_string(t.dtype.lanes) +
                                          ") is not one onesided moves");
  py::dtype dtype(name);
  const Shape shape = tensor_shape(t, static_cast<std::int64_t>(dtype.itemsize()), what);
  const std::uintptr_t base = base_address(t, shape, what);
  if (writable && (taken.read_only || taken.copied))
    raise(kBufferArgument, what + " buffer is read-only: its DLPack tensor is flagged " +
                               (taken.copied ? "IS_COPIED (writes would not reach the producer's memory)"
                                             : "READ_ONLY"));
  // Taken from here on (step 2).
  auto* hold = new Hold{capsule.inc_ref().ptr(), taken.managed, taken.versioned};
  PyObject* hold_capsule = PyCapsule_New(hold, kHoldName, release_hold);
  if (!hold_capsule) {
    capsule.dec_ref();
    delete hold;
    throw py::error_already_set();
  }
  py::object owner = py::reinterpret_steal<py::object>(hold_capsule);
  PyCapsule_SetName(capsule.ptr(), taken.versioned ? "used_dltensor_versioned" : "used_dltensor");
  static char no_memory;  // an empty tensor's data may be NULL; numpy's view needs an address
  const void* data = shape.empty && !base ? &no_memory : reinterpret_cast<const void*>(base);
  py::array out(dtype, shape.dims, shape.strides, data, owner);
  if (taken.read_only || taken.copied) out.attr("setflags")(py::arg("write") = false);
  return out;
}

}  // namespace

void register_buffers(py::module_& m) {
  m.def("dlpack_array", &dlpack_array, py::arg("obj"), py::arg("what"), py::arg("writable"),
        "A numpy array over the memory of `obj`'s DLPack tensor, which it keeps (and releases with the "
        "deleter, once) as its base. Host memory only; every field checked before the capsule is taken.");
  m.def("buffer_address", [](py::handle obj) -> py::object {
    Py_buffer view;
    if (PyObject_GetBuffer(obj.ptr(), &view, PyBUF_FULL_RO) != 0) {
      PyErr_Clear();
      return py::none();
    }
    const auto address = reinterpret_cast<std::uintptr_t>(view.buf);
    PyBuffer_Release(&view);
    return py::int_(address);
  }, "The address the buffer protocol gives for `obj` (its first element; 0 for memory at address 0, as "
     "MPI.BOTTOM or a dynamic window's memory), or None when `obj` exports no buffer.");
  m.def("host_memory", [](std::uintptr_t address, std::uint64_t nbytes) { return host_memory(address, nbytes); },
        "Whether the first and last byte of [address, address + nbytes) are mapped in this process.");
}

}  // namespace onesided::python
