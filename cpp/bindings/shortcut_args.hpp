// The shortcut: plain C-contiguous numpy arrays of a supported dtype, int
// ranks and displacements, and onesided's own op codes (and mpi4py ops the
// Python layer has once translated) are recognised here in a few C-API
// calls. The calls that take strided data (Put, Get, Accumulate: kStrided)
// also take numpy's strided views as they are and a target of (disp,
// count, onesided.Layout) or a Layout, whose core layout the Python layer
// has built once for the call's dtype. Anything else (tuples with counts,
// memoryviews, mpi4py datatypes, a Layout not yet built for the dtype)
// makes recognise() return false, and the fast entry (fast_entries.hpp)
// hands the call to the full parse, which raises every error. The
// operations describe only their arguments and their core call
// (register_operations.cpp).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <array>
#include <climits>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "checked_args.hpp"
#include "onesided/layout.hpp"
#include "onesided/types.hpp"
#include "onesided/window.hpp"

namespace onesided::python {

namespace py = pybind11;

struct ShortcutArray {
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
      if (d.cls == kPair) continue;  // numpy records: the full parse
      const int num = py::dtype(std::string(d.name)).num();
      if (num >= 0 && num < 64) t[static_cast<std::size_t>(num)] = static_cast<int>(d.id);
    }
    return t;
  }();
  return table;
}

// A numpy array of a supported dtype in native byte order; C-contiguous,
// or, where `strided` is given, any view, whose elements' layout (from its
// first element, in C order, as the full parse builds it) goes there.
inline bool shortcut_array(py::handle h, bool writable, ShortcutArray& out,
                           std::optional<Layout>* strided = nullptr) {
  auto& api = py::detail::npy_api::get();
  if (!api.PyArray_Check_(h.ptr())) return false;
  auto* a = reinterpret_cast<py::detail::PyArray_Proxy*>(h.ptr());
  constexpr int kCContiguous = py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_;
  constexpr int kWriteable = py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  const bool contiguous = a->flags & kCContiguous;
  if ((!contiguous && !strided) || (writable && !(a->flags & kWriteable))) return false;
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
  if (!contiguous) {
    // numpy's strides are bytes, of any sign; its own checks keep every
    // element inside the array's memory. The item size is the dtype's (a
    // numpy type number names one size).
    constexpr int kMaxDims = 64;
    if (a->nd > kMaxDims) return false;
    std::array<std::uint64_t, kMaxDims> shape;
    std::array<std::int64_t, kMaxDims> strides;
    for (int i = 0; i < a->nd; ++i) {
      shape[static_cast<std::size_t>(i)] = static_cast<std::uint64_t>(a->dimensions[i]);
      strides[static_cast<std::size_t>(i)] = a->strides[i];
    }
    const auto nd = static_cast<std::size_t>(a->nd);
    strided->emplace(Layout::strided(out.dtype, 0, std::span(shape.data(), nd), std::span(strides.data(), nd)));
  }
  return true;
}

inline bool shortcut_int(py::handle h, std::int64_t& out) {
  if (!PyLong_CheckExact(h.ptr())) return false;
  int overflow = 0;
  out = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
  return !overflow && !(out == -1 && PyErr_Occurred());
}

// onesided.Layout, set once at import (_core._set_layout_type).
inline PyTypeObject*& layout_type() {
  static PyTypeObject* type = nullptr;
  return type;
}

// The core layout a target spec names for `count` elements of `dtype`:
// (disp, count, Layout) with count None, 1 or the layout's count, or a
// Layout alone (disp 0). False (nothing raised) for anything else,
// including a Layout the Python layer has not built for this dtype yet
// (its to_core cache, `_core`), whose checks the full parse then runs.
inline bool shortcut_target_layout(py::handle spec, Dtype dtype, std::size_t count, std::int64_t& disp,
                                   const Layout*& out) {
  PyObject* layout = spec.ptr();
  disp = 0;
  if (PyTuple_CheckExact(layout)) {
    if (PyTuple_GET_SIZE(layout) != 3) return false;
    std::int64_t n = 0;
    PyObject* c = PyTuple_GET_ITEM(layout, 1);
    if (!shortcut_int(PyTuple_GET_ITEM(layout, 0), disp) || (c != Py_None && !shortcut_int(c, n))) return false;
    layout = PyTuple_GET_ITEM(layout, 2);
    if (c != Py_None && n != 1 && static_cast<std::uint64_t>(n) != count) return false;
  }
  if (!layout_type() || Py_TYPE(layout) != layout_type()) return false;
  static PyObject* const cache_name = PyUnicode_InternFromString("_core");
  PyObject* cache = PyObject_GetAttr(layout, cache_name);
  if (!cache) {
    PyErr_Clear();
    return false;
  }
  PyObject* key = PyLong_FromLong(static_cast<long>(dtype));  // a small int: CPython's cached one
  PyObject* core = key && PyDict_CheckExact(cache) ? PyDict_GetItemWithError(cache, key) : nullptr;
  Py_XDECREF(key);
  Py_DECREF(cache);  // the layout's dict still holds `core`; the caller's tuple holds the layout
  if (!core) {
    PyErr_Clear();
    return false;
  }
  py::detail::make_caster<Layout> caster;
  if (!caster.load(core, false)) return false;
  out = &py::detail::cast_op<const Layout&>(caster);
  return out->count() == count && out->dtype() == dtype;
}

// Foreign op objects (mpi4py's MPI.SUM, ...) the Python layer translated
// once, by identity; each holds a reference, so an address is never reused.
// Bounded: ops made afresh per call just stay on the full path.
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

// onesided.Op, set once at import (_core._set_op_type).
inline PyTypeObject*& op_type() {
  static PyTypeObject* type = nullptr;
  return type;
}

// onesided's own Op objects (exactly that type: a plain int, a bool or an
// IntEnum of the user's is never an op) and the foreign ops remembered.
inline bool shortcut_op(py::handle h, Op& out) {
  if (Py_TYPE(h.ptr()) != op_type()) {
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

// How an operation uses one of its array arguments.
enum class Use {
  Read,
  Write,
  ReadOrNoneForInc,  // read, or None when the op is INC (which has no operand)
};
// What the element counts of one call's arrays must satisfy; their dtypes
// must always be one. One: exactly one element each (Fetch_and_op,
// Compare_and_swap), as mpi4py requires.
enum class Counts { Any, Equal, One };
enum class TakesOp { No, Yes };

// An operation's shortcut signature: its arrays in order, then the target
// rank and the displacement, then the op if it takes one. An operation
// derives from this and adds
//   static void issue(Window&, const ShortcutCall<N>&);  (or const auto&)
// which makes the core call.
// kStrided: strided views and Layout targets too (the single-array calls
// whose core has layout forms: Put, Get, Accumulate).
enum class Strided { No, Yes };
template <Counts kCountRule, TakesOp kOpArgument, Strided kStrides, Use... kUses>
struct Shortcut {
  static constexpr std::array<Use, sizeof...(kUses)> kArrays{kUses...};
  static constexpr Counts kCounts = kCountRule;
  static constexpr bool kTakesOp = kOpArgument == TakesOp::Yes;
  static constexpr bool kStrided = kStrides == Strided::Yes;
  static_assert(!kStrided || sizeof...(kUses) == 1);
  static constexpr std::size_t kArity = sizeof...(kUses) + 2 + (kTakesOp ? 1 : 0);
};

// One recognised call. An array left out (None for INC) has a null pointer.
template <std::size_t N>
struct ShortcutCall {
  std::array<ShortcutArray, N> arrays{};
  int target = 0;
  std::int64_t disp = 0;
  Op op{};
  // Strided calls only: the array's layout when it is a strided view, the
  // target's when the spec named a Layout (borrowed from that Layout,
  // which the call's arguments keep alive).
  std::optional<Layout> buffer_layout;
  const Layout* target_layout = nullptr;

  bool laid_out() const { return buffer_layout || target_layout; }
  // f(buffer side, target side) for the layout form, contiguous where
  // nothing was laid out (built only then: the given ones are not copied).
  template <class F>
  void with_layouts(F&& f) const {
    std::optional<Layout> flat;
    auto side = [&](const Layout* given) -> const Layout& {
      if (given) return *given;
      if (!flat) flat.emplace(Layout::contiguous(arrays[0].dtype, arrays[0].count));
      return *flat;
    };
    f(side(buffer_layout ? &*buffer_layout : nullptr), side(target_layout));
  }
};

template <class Operation>
using ShortcutCallOf = ShortcutCall<Operation::kArrays.size()>;

// True, with `call` filled in, when every argument takes the shortcut;
// false (nothing raised) when the Python layer must parse them in full.
template <class Operation>
bool recognise(const std::array<py::handle, Operation::kArity>& args, ShortcutCallOf<Operation>& call) {
  constexpr std::size_t n = Operation::kArrays.size();
  std::int64_t target = 0;
  if (!shortcut_int(args[n], target)) return false;
  // A target spec other than an int: the Layout forms, once the array's
  // dtype and count are known (below).
  const bool spec_is_int = shortcut_int(args[n + 1], call.disp);
  if (!spec_is_int && !Operation::kStrided) return false;
  // Never truncated: a rank the core's int cannot hold is the full path's
  // error (not in the window's group). Negative ranks other than onesided's
  // PROC_NULL go there too: mpi4py's MPI.PROC_NULL is -2 on Open MPI, and
  // only the full path translates it.
  if (target < kProcNull || target > INT_MAX) return false;
  call.target = static_cast<int>(target);
  if constexpr (Operation::kTakesOp)
    if (!shortcut_op(args[n + 2], call.op)) return false;
  const ShortcutArray* first = nullptr;
  for (std::size_t i = 0; i < n; ++i) {
    const Use use = Operation::kArrays[i];
    if (use == Use::ReadOrNoneForInc && call.op == Op::Inc && args[i].is_none()) continue;
    ShortcutArray& a = call.arrays[i];
    if (!shortcut_array(args[i], use == Use::Write, a, Operation::kStrided ? &call.buffer_layout : nullptr))
      return false;
    if (Operation::kCounts == Counts::One && a.count != 1) return false;
    if (first && (a.dtype != first->dtype || (Operation::kCounts == Counts::Equal && a.count != first->count)))
      return false;
    if (!first) first = &a;
  }
  if constexpr (Operation::kStrided)
    if (!spec_is_int &&
        !shortcut_target_layout(args[n + 1], call.arrays[0].dtype, call.arrays[0].count, call.disp,
                                call.target_layout))
      return false;
  return true;
}

// Keeps `arrays` referenced in keep[target] (a dict of lists, the Python
// Window's _pending) until a completion point drops them: the core holds
// only their pointers.
inline void keep_until_complete(const py::dict& keep, py::handle target, const py::handle* arrays,
                                std::size_t n) {
  PyObject* kept = PyDict_GetItemWithError(keep.ptr(), target.ptr());
  if (!kept) {
    if (PyErr_Occurred()) throw py::error_already_set();
    py::list fresh;
    if (PyDict_SetItem(keep.ptr(), target.ptr(), fresh.ptr()) != 0) throw py::error_already_set();
    kept = fresh.ptr();  // the dict holds it now
  }
  for (std::size_t i = 0; i < n; ++i)
    if (PyList_Append(kept, arrays[i].ptr()) != 0) throw py::error_already_set();
}

// The notification index of a notified call (Put_notify, ...): a plain int
// below the window's count, else false (before anything is issued), and the
// full parse raises its error.
inline bool shortcut_index(Window& w, py::handle h, std::size_t& out) {
  std::int64_t i = 0;
  if (!shortcut_int(h, i) || i < 0 || static_cast<std::uint64_t>(i) >= w.notifications()) return false;
  out = static_cast<std::size_t>(i);
  return true;
}

}  // namespace onesided::python
