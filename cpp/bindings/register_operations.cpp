// The operations: put, get, the accumulate family and the read-modify-writes
// of seed 002. Their fast entries (fast_entries.hpp) take the user's own
// arguments and recognise plain arrays (shortcut_args.hpp); the full forms
// (_put, _get, ...) take what the full parse made of anything else (buffer,
// count, dtype code, layouts). Every full form releases the GIL around its
// core call, since any operation may wait for its target (for its Post, for
// ordering, for provider resources).

#include <pybind11/pybind11.h>

#include <array>
#include <list>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "registrations.hpp"
#include "onesided/window.hpp"
#include "checked_args.hpp"
#include "parsed_args.hpp"
#include "shortcut_args.hpp"
#include "fast_entries.hpp"

namespace onesided::python {

namespace py = pybind11;

// Runs `call(request or nullptr)` without the GIL; the R* forms ask for the
// Request, the others get None.
template <class Call>
py::object issue_nogil(bool want_request, Call&& call) {
  Request req;
  {
    py::gil_scoped_release nogil;
    call(want_request ? &req : nullptr);
  }
  return want_request ? py::cast(std::move(req)) : py::none();
}

// The layout of the target side: the one given, else `count` contiguous
// elements.
inline Layout target_side(const Layout* given, std::size_t count, int dtype) {
  return given ? *given : Layout::contiguous(to_dtype(dtype), count);
}

// The full form of put (kWrites false) or get: one buffer, read or
// written, named `what` in errors; contiguous data takes the plain core
// call, anything else the layout form.
template <bool kWrites>
void def_transfer(py::class_<Window>& cls, const char* name, const char* what) {
  cls.def(
      name,
      guard([what](Window& w, py::handle buffer, std::size_t count, int dtype, py::handle target_arg,
                   py::handle disp_arg, bool want_request, const Layout* buffer_layout,
                   const Layout* target_layout) {
        const int target = rank_arg(target_arg);
        const std::int64_t disp = int64_arg(disp_arg, "target displacement");
        const Operand b = operand(buffer, count, dtype, buffer_layout, kWrites, what);
        if (b.contiguous() && !target_layout)
          return issue_nogil(want_request, [&](Request* req) {
            if constexpr (kWrites) w.get(b.first, count, to_dtype(dtype), target, disp, req);
            else w.put(b.first, count, to_dtype(dtype), target, disp, req);
          });
        const Layout t = target_side(target_layout, count, dtype), bl = b.layout_of(to_dtype(dtype), count);
        return issue_nogil(want_request, [&](Request* req) {
          if constexpr (kWrites) w.get(b.first, bl, target, disp, t, req);
          else w.put(b.first, bl, target, disp, t, req);
        });
      }),
      py::arg(what), py::arg("count"), py::arg("dtype"), py::arg("target"), py::arg("disp"),
      py::arg("want_request") = false, py::arg("origin_layout") = nullptr, py::arg("target_layout") = nullptr);
}

// The shortcut signature of each operation, and its core call.
namespace shortcut {

// Put, Get and Accumulate take strided views and Layout targets too: those
// go to the core's layout forms, plain arrays to the contiguous ones.
struct Put : Shortcut<Counts::Any, TakesOp::No, Strided::Yes, Use::Read> {
  static void issue(Window& w, const auto& c) {
    const auto& [o] = c.arrays;
    if (c.laid_out())
      return c.with_layouts([&](const Layout& ol, const Layout& tl) { w.put(o.ptr, ol, c.target, c.disp, tl); });
    w.put(o.ptr, o.count, o.dtype, c.target, c.disp);
  }
};
struct Get : Shortcut<Counts::Any, TakesOp::No, Strided::Yes, Use::Write> {
  static void issue(Window& w, const auto& c) {
    const auto& [r] = c.arrays;
    if (c.laid_out())
      return c.with_layouts([&](const Layout& rl, const Layout& tl) { w.get(r.ptr, rl, c.target, c.disp, tl); });
    w.get(r.ptr, r.count, r.dtype, c.target, c.disp);
  }
};
struct Accumulate : Shortcut<Counts::Any, TakesOp::Yes, Strided::Yes, Use::Read> {
  static void issue(Window& w, const auto& c) {
    const auto& [o] = c.arrays;
    if (c.laid_out())
      return c.with_layouts(
          [&](const Layout& ol, const Layout& tl) { w.accumulate(o.ptr, ol, c.target, c.disp, tl, c.op); });
    w.accumulate(o.ptr, o.count, o.dtype, c.target, c.disp, c.op);
  }
};
struct GetAccumulate : Shortcut<Counts::Equal, TakesOp::Yes, Strided::No, Use::Read, Use::Write> {
  static void issue(Window& w, const auto& c) {
    const auto& [o, r] = c.arrays;
    w.get_accumulate(o.ptr, r.ptr, r.count, r.dtype, c.target, c.disp, c.op);
  }
};
struct FetchAndOp : Shortcut<Counts::One, TakesOp::Yes, Strided::No, Use::Read, Use::Write> {
  static void issue(Window& w, const auto& c) {
    const auto& [o, r] = c.arrays;
    w.fetch_and_op(o.ptr, r.ptr, r.dtype, c.target, c.disp, c.op);
  }
};
struct CompareAndSwap : Shortcut<Counts::One, TakesOp::No, Strided::No, Use::Read, Use::Read, Use::Write> {
  static void issue(Window& w, const auto& c) {
    const auto& [o, compare, r] = c.arrays;
    w.compare_and_swap(o.ptr, compare.ptr, r.ptr, r.dtype, c.target, c.disp);
  }
};
struct Rmw : Shortcut<Counts::Equal, TakesOp::Yes, Strided::No, Use::ReadOrNoneForInc, Use::Write> {
  static void issue(Window& w, const auto& c) {
    const auto& [o, r] = c.arrays;
    w.rmw(c.op, o.ptr, r.ptr, r.count, r.dtype, c.target, c.disp);
  }
};
struct Rmw2 : Shortcut<Counts::Equal, TakesOp::Yes, Strided::No, Use::Read, Use::Read, Use::Write> {
  static void issue(Window& w, const auto& c) {
    const auto& [o, o2, r] = c.arrays;
    w.rmw2(c.op, o.ptr, o2.ptr, r.ptr, r.count, r.dtype, c.target, c.disp);
  }
};

}  // namespace shortcut

namespace {

// Each fast call: its shortcut, and how its parameters end (fast_entries.hpp).
// The names are the calls table's (python/onesided, _define_fast).
std::vector<std::pair<std::string, fast::Forms>>& fast_calls() {
  using fast::Extra;
  static std::vector<std::pair<std::string, fast::Forms>> calls{
      {"Put", fast::forms<shortcut::Put, true>()},
      {"Get", fast::forms<shortcut::Get, true>()},
      {"Accumulate", fast::forms<shortcut::Accumulate, true>()},
      {"Get_accumulate", fast::forms<shortcut::GetAccumulate, true>()},
      {"Fetch_and_op", fast::forms<shortcut::FetchAndOp, false>()},
      {"Compare_and_swap", fast::forms<shortcut::CompareAndSwap, false>()},
      {"Rmw", fast::forms<shortcut::Rmw, false, Extra::Assertion>()},
      {"Rmw2", fast::forms<shortcut::Rmw2, false, Extra::Assertion>()},
      {"Put_notify", fast::forms<shortcut::Put, true, Extra::Notification>()},
      {"Get_notify", fast::forms<shortcut::Get, true, Extra::Notification>()},
      {"Accumulate_notify", fast::forms<shortcut::Accumulate, true, Extra::Notification>()},
  };
  return calls;
}

fast::Forms& fast_call(const std::string& name) {
  for (auto& [n, forms] : fast_calls())
    if (n == name) return forms;
  raise(ErrorCategory::Internal, "no fast entry for " + name);
}

PyObject* interned(const std::string& text) {
  PyObject* s = py::str(text).release().ptr();
  PyUnicode_InternInPlace(&s);
  return s;
}

// Gives the fast entry of `name` its parameter names, default op and
// docstring from the calls table; a table whose row does not fit the entry
// fails the import.
void define_fast(const std::string& name, const py::tuple& params, py::object default_op, const std::string& doc) {
  fast::Forms& f = fast_call(name);
  if (params.size() != f.params)
    raise(ErrorCategory::Internal, name + ": the calls table gives " + std::to_string(params.size()) +
                                       " parameters, its fast entry takes " + std::to_string(f.params));
  for (std::size_t i = 0; i < f.params; ++i) {
    Py_XDECREF(f.names[i]);
    f.names[i] = interned(py::str(params[i]));
  }
  Py_XDECREF(*f.default_op);
  *f.default_op = default_op.release().ptr();
  Py_XDECREF(*f.method);
  *f.method = interned(name);
  // The entries' __name__ and __doc__, kept for the module's life.
  static std::list<std::string> texts;
  f.inline_def->ml_name = f.holding_def->ml_name = texts.emplace_back(name).c_str();
  f.inline_def->ml_doc = f.holding_def->ml_doc = texts.emplace_back(doc).c_str();
}

}  // namespace

void register_operations(py::module_& m, py::class_<Window>& cls) {
  // The fast entries (fast_entries.hpp): FAST_CALLS names them;
  // _define_fast gives each its names from the calls table; and
  // _fast_entries(win, pending, held) returns them bound to `win`, in
  // FAST_CALLS order: the Inline entries when `pending` is None, else the
  // Holding ones, which keep arrays in `pending`: every call's, or with
  // `held` (names) only those calls' (a Get whose result the path may write
  // at the next completion point), the others Inline.
  py::list names;
  for (const auto& [name, forms] : fast_calls()) names.append(name);
  m.attr("FAST_CALLS") = names;
  m.def("_define_fast", &define_fast, py::arg("name"), py::arg("params"), py::arg("default_op"), py::arg("doc"));
  m.def(
      "_fast_entries",
      [](py::handle window, py::object pending, py::object held) {
        checked(window);
        const bool holding = !pending.is_none();
        if (holding && !PyDict_CheckExact(pending.ptr())) throw py::type_error("pending must be a dict");
        std::set<std::string> only;
        if (!held.is_none())
          for (py::handle name : held) only.insert(py::cast<std::string>(name));
        const py::object bare = py::reinterpret_borrow<py::object>(window);
        const py::object with_pending = holding ? py::object(py::make_tuple(window, pending)) : bare;
        py::list out;
        for (const auto& [name, forms] : fast_calls()) {
          if (!*forms.method) raise(ErrorCategory::Internal, name + ": fast entry used before _define_fast");
          const bool holds = holding && (held.is_none() || only.count(name));
          PyObject* fn = PyCFunction_NewEx(holds ? forms.holding_def : forms.inline_def,
                                           (holds ? with_pending : bare).ptr(), nullptr);
          if (!fn) throw py::error_already_set();
          out.append(py::reinterpret_steal<py::object>(fn));
        }
        return py::tuple(out);
      },
      py::arg("window"), py::arg("pending"), py::arg("held") = py::none());

  // The full forms. The R* forms pass want_request and get a Request back
  // (else None).
  def_transfer<false>(cls, "_put", "origin");
  def_transfer<true>(cls, "_get", "result");
  cls.def(
         "_accumulate",
         guard([](Window& w, py::handle origin, std::size_t count, int dtype, py::handle target_arg,
                  py::handle disp_arg, int op, bool want_request, const Layout* origin_layout,
                  const Layout* target_layout) {
           const int target = rank_arg(target_arg);
           const std::int64_t disp = int64_arg(disp_arg, "target displacement");
           const Operand o = operand(origin, count, dtype, origin_layout, false, "origin");
           const Op code = to_op(op);
           if (o.contiguous() && !target_layout)
             return issue_nogil(want_request, [&](Request* req) {
               w.accumulate(o.first, count, to_dtype(dtype), target, disp, code, req);
             });
           const Layout t = target_side(target_layout, count, dtype), ol = o.layout_of(to_dtype(dtype), count);
           return issue_nogil(want_request,
                              [&](Request* req) { w.accumulate(o.first, ol, target, disp, t, code, req); });
         }),
         py::arg("origin"), py::arg("count"), py::arg("dtype"), py::arg("target"), py::arg("disp"), py::arg("op"),
         py::arg("want_request") = false, py::arg("origin_layout") = nullptr, py::arg("target_layout") = nullptr)
      .def(
          "_get_accumulate",
          guard([](Window& w, py::handle origin, py::handle result, std::size_t count, int dtype,
                   py::handle target_arg, py::handle disp_arg, int op, bool want_request,
                   const Layout* origin_layout, const Layout* result_layout, const Layout* target_layout) {
            const int target = rank_arg(target_arg);
            const std::int64_t disp = int64_arg(disp_arg, "target displacement");
            const Op code = to_op(op);
            const Operand r = operand(result, count, dtype, result_layout, true, "result");
            // NO_OP reads no operand: the origin then only has to count.
            const Operand o = code == Op::NoOp ? Operand{nullptr, r.layout}
                                               : operand(origin, count, dtype, origin_layout, false, "origin");
            if (o.contiguous() && r.contiguous() && !target_layout)
              return issue_nogil(want_request, [&](Request* req) {
                w.get_accumulate(o.first, r.first, count, to_dtype(dtype), target, disp, code, req);
              });
            const Dtype d = to_dtype(dtype);
            const Layout t = target_side(target_layout, count, dtype), ol = o.layout_of(d, count),
                         rl = r.layout_of(d, count);
            return issue_nogil(want_request, [&](Request* req) {
              w.get_accumulate(o.first, ol, r.first, rl, target, disp, t, code, req);
            });
          }),
          py::arg("origin"), py::arg("result"), py::arg("count"), py::arg("dtype"), py::arg("target"),
          py::arg("disp"), py::arg("op"), py::arg("want_request") = false, py::arg("origin_layout") = nullptr,
          py::arg("result_layout") = nullptr, py::arg("target_layout") = nullptr)
      .def("_fetch_and_op",
           guard([](Window& w, py::handle origin, py::handle result, int dtype, py::handle target_arg,
                    py::handle disp_arg, int op, bool want_request) {
             const int target = rank_arg(target_arg);
             const std::int64_t disp = int64_arg(disp_arg, "target displacement");
             const std::size_t n = nbytes(1, dtype);
             const void* o = op == static_cast<int>(Op::NoOp) ? nullptr : buffer_ptr(origin, n, false, "origin");
             void* r = buffer_ptr(result, n, true, "result");
             const Op code = to_op(op);
             return issue_nogil(want_request,
                                [&](Request* req) { w.fetch_and_op(o, r, to_dtype(dtype), target, disp, code, req); });
           }),
           py::arg("origin"), py::arg("result"), py::arg("dtype"), py::arg("target"), py::arg("disp"), py::arg("op"),
           py::arg("want_request") = false)
      .def("_compare_and_swap",
           guard([](Window& w, py::handle origin, py::handle compare, py::handle result, int dtype,
                    py::handle target_arg, py::handle disp_arg, bool want_request) {
             const int target = rank_arg(target_arg);
             const std::int64_t disp = int64_arg(disp_arg, "target displacement");
             const std::size_t n = nbytes(1, dtype);
             const void* o = buffer_ptr(origin, n, false, "origin");
             const void* c = buffer_ptr(compare, n, false, "compare");
             void* r = buffer_ptr(result, n, true, "result");
             return issue_nogil(want_request,
                                [&](Request* req) { w.compare_and_swap(o, c, r, to_dtype(dtype), target, disp, req); });
           }),
           py::arg("origin"), py::arg("compare"), py::arg("result"), py::arg("dtype"), py::arg("target"),
           py::arg("disp"), py::arg("want_request") = false)
      .def(
          "_rmw",
          guard([](Window& w, int op, py::handle origin, py::handle result, std::size_t count, int dtype,
                   py::handle target_arg, py::handle disp_arg, unsigned assertion, bool want_request) {
            const int target = rank_arg(target_arg);
            const std::int64_t disp = int64_arg(disp_arg, "target displacement");
            const std::size_t n = nbytes(count, dtype);
            const Op code = to_op(op);
            const void* o = op_info(code).operands >= 1 ? buffer_ptr(origin, n, false, "origin") : nullptr;
            void* r = buffer_ptr(result, n, true, "result");
            // With MODE_PASSIVE_EPOCH_IMPLICIT the call is lock, op, unlock.
            return issue_nogil(want_request, [&](Request* req) {
              w.rmw(code, o, r, count, to_dtype(dtype), target, disp, assertion, req);
            });
          }),
          py::arg("op"), py::arg("origin"), py::arg("result"), py::arg("count"), py::arg("dtype"),
          py::arg("target"), py::arg("disp"), py::arg("assertion"), py::arg("want_request") = false)
      .def(
          "_rmw2",
          guard([](Window& w, int op, py::handle origin, py::handle origin2, py::handle result,
                   std::size_t count, int dtype, py::handle target_arg, py::handle disp_arg, unsigned assertion,
                   bool want_request) {
            const int target = rank_arg(target_arg);
            const std::int64_t disp = int64_arg(disp_arg, "target displacement");
            const std::size_t n = nbytes(count, dtype);
            const void* o = buffer_ptr(origin, n, false, "origin");
            const void* o2 = buffer_ptr(origin2, n, false, "origin2");
            void* r = buffer_ptr(result, n, true, "result");
            const Op code = to_op(op);
            return issue_nogil(want_request, [&](Request* req) {
              w.rmw2(code, o, o2, r, count, to_dtype(dtype), target, disp, assertion, req);
            });
          }),
          py::arg("op"), py::arg("origin"), py::arg("origin2"), py::arg("result"), py::arg("count"),
          py::arg("dtype"), py::arg("target"), py::arg("disp"), py::arg("assertion"),
          py::arg("want_request") = false);
}

}  // namespace onesided::python
