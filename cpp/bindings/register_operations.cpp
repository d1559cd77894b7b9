// The operations: put, get, the accumulate family and the read-modify-writes
// of seed 002, each in two forms. The full form takes what the Python layer
// parsed (buffer, count, dtype code, ...); the shortcut forms take the
// user's own arguments and recognise plain arrays (shortcut_args.hpp). Every
// full form releases the GIL around its core call, since any operation may
// wait for its target (for its Post, for ordering, for provider resources).

#include <pybind11/pybind11.h>

#include <array>

#include "registrations.hpp"
#include "onesided/window.hpp"
#include "checked_args.hpp"
#include "parsed_args.hpp"
#include "shortcut_args.hpp"
#include "direct_forms.hpp"

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

struct Put : Shortcut<Counts::Any, TakesOp::No, Use::Read> {
  static void issue(Window& w, const auto& c) {
    const auto& [o] = c.arrays;
    w.put(o.ptr, o.count, o.dtype, c.target, c.disp);
  }
};
struct Get : Shortcut<Counts::Any, TakesOp::No, Use::Write> {
  static void issue(Window& w, const auto& c) {
    const auto& [r] = c.arrays;
    w.get(r.ptr, r.count, r.dtype, c.target, c.disp);
  }
};
struct Accumulate : Shortcut<Counts::Any, TakesOp::Yes, Use::Read> {
  static void issue(Window& w, const auto& c) {
    const auto& [o] = c.arrays;
    w.accumulate(o.ptr, o.count, o.dtype, c.target, c.disp, c.op);
  }
};
struct GetAccumulate : Shortcut<Counts::Equal, TakesOp::Yes, Use::Read, Use::Write> {
  static void issue(Window& w, const auto& c) {
    const auto& [o, r] = c.arrays;
    w.get_accumulate(o.ptr, r.ptr, r.count, r.dtype, c.target, c.disp, c.op);
  }
};
struct FetchAndOp : Shortcut<Counts::One, TakesOp::Yes, Use::Read, Use::Write> {
  static void issue(Window& w, const auto& c) {
    const auto& [o, r] = c.arrays;
    w.fetch_and_op(o.ptr, r.ptr, r.dtype, c.target, c.disp, c.op);
  }
};
struct CompareAndSwap : Shortcut<Counts::One, TakesOp::No, Use::Read, Use::Read, Use::Write> {
  static void issue(Window& w, const auto& c) {
    const auto& [o, compare, r] = c.arrays;
    w.compare_and_swap(o.ptr, compare.ptr, r.ptr, r.dtype, c.target, c.disp);
  }
};
struct Rmw : Shortcut<Counts::Equal, TakesOp::Yes, Use::ReadOrNoneForInc, Use::Write> {
  static void issue(Window& w, const auto& c) {
    const auto& [o, r] = c.arrays;
    w.rmw(c.op, o.ptr, r.ptr, r.count, r.dtype, c.target, c.disp);
  }
};
struct Rmw2 : Shortcut<Counts::Equal, TakesOp::Yes, Use::Read, Use::Read, Use::Write> {
  static void issue(Window& w, const auto& c) {
    const auto& [o, o2, r] = c.arrays;
    w.rmw2(c.op, o.ptr, o2.ptr, r.ptr, r.count, r.dtype, c.target, c.disp);
  }
};

}  // namespace shortcut

// The direct forms of MPI.Win's six RMA calls: MPI.Win's parameter names, in
// the shortcut's argument order.
namespace direct_form {
using Names3 = std::array<const char*, 3>;
using Names4 = std::array<const char*, 4>;
using Names5 = std::array<const char*, 5>;
struct Put : DirectOperation<shortcut::Put, true> {
  static constexpr const char* method = "Put";
  static constexpr Names3 params{"origin", "target_rank", "target"};
  static constexpr const char* doc = "Put(origin, target_rank, target=None): see Window.Put.";
};
struct Get : DirectOperation<shortcut::Get, true> {
  static constexpr const char* method = "Get";
  static constexpr Names3 params{"origin", "target_rank", "target"};
  static constexpr const char* doc = "Get(origin, target_rank, target=None): see Window.Get.";
};
struct Accumulate : DirectOperation<shortcut::Accumulate, true> {
  static constexpr const char* method = "Accumulate";
  static constexpr Names4 params{"origin", "target_rank", "target", "op"};
  static constexpr const char* doc = "Accumulate(origin, target_rank, target=None, op=SUM): see Window.Accumulate.";
};
struct GetAccumulate : DirectOperation<shortcut::GetAccumulate, true> {
  static constexpr const char* method = "Get_accumulate";
  static constexpr Names5 params{"origin", "result", "target_rank", "target", "op"};
  static constexpr const char* doc =
      "Get_accumulate(origin, result, target_rank, target=None, op=SUM): see Window.Get_accumulate.";
};
struct FetchAndOp : DirectOperation<shortcut::FetchAndOp, false> {
  static constexpr const char* method = "Fetch_and_op";
  static constexpr Names5 params{"origin", "result", "target_rank", "target_disp", "op"};
  static constexpr const char* doc =
      "Fetch_and_op(origin, result, target_rank, target_disp=0, op=SUM): see Window.Fetch_and_op.";
};
struct CompareAndSwap : DirectOperation<shortcut::CompareAndSwap, false> {
  static constexpr const char* method = "Compare_and_swap";
  static constexpr Names5 params{"origin", "compare", "result", "target_rank", "target_disp"};
  static constexpr const char* doc =
      "Compare_and_swap(origin, compare, result, target_rank, target_disp=0): see Window.Compare_and_swap.";
};
}  // namespace direct_form

void register_operations(py::module_& m, py::class_<Window>& cls) {
  // The shortcut forms; SHORTCUT_FORMS names them for the Python layer.
  py::list forms;
  auto add = [&]<class Operation>(const char* name, Operation) {
    def_shortcut<Operation>(cls, name);
    forms.append(name);
  };
  add("put", shortcut::Put{});
  add("get", shortcut::Get{});
  add("accumulate", shortcut::Accumulate{});
  add("get_accumulate", shortcut::GetAccumulate{});
  add("fetch_and_op", shortcut::FetchAndOp{});
  add("compare_and_swap", shortcut::CompareAndSwap{});
  add("rmw", shortcut::Rmw{});
  add("rmw2", shortcut::Rmw2{});
  m.attr("SHORTCUT_FORMS") = forms;
  // The direct forms (direct_forms.hpp): DIRECT_FORMS names them, and
  // _direct_forms(win) returns them bound to `win`, in that order.
  py::list direct_names;
  for (const char* name : {direct_form::Put::method, direct_form::Get::method, direct_form::Accumulate::method,
                           direct_form::GetAccumulate::method, direct_form::FetchAndOp::method,
                           direct_form::CompareAndSwap::method})
    direct_names.append(name);
  m.attr("DIRECT_FORMS") = direct_names;
  m.def("_direct_forms", [](py::handle window) {
    checked(window);
    return py::make_tuple(direct_method<direct_form::Put>(window), direct_method<direct_form::Get>(window),
                          direct_method<direct_form::Accumulate>(window),
                          direct_method<direct_form::GetAccumulate>(window),
                          direct_method<direct_form::FetchAndOp>(window),
                          direct_method<direct_form::CompareAndSwap>(window));
  });
  // Their notified forms, for Put_notify, Get_notify and Accumulate_notify.
  py::list notified;
  auto add_notified = [&]<class Operation>(const char* name, Operation) {
    def_notified_shortcut<Operation>(cls, name);
    notified.append(name);
  };
  add_notified("put", shortcut::Put{});
  add_notified("get", shortcut::Get{});
  add_notified("accumulate", shortcut::Accumulate{});
  m.attr("NOTIFIED_SHORTCUT_FORMS") = notified;

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
