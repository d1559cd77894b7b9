// The data calls: every check happens here, at the edge, before anything
// is sent (a live window, a rank in the group, an open epoch, the target
// range inside what the target exposes, an op the dtype and the window's
// declared accumulate_ops admit); then one call on the window's path.
// MPI_PROC_NULL (kProcNull) is a valid target of every call and does
// nothing (MPI-3.1 11.3); its requests are complete at once.

#include "memory/checked.hpp"
#include "window/impl.hpp"

namespace onesided {

using namespace detail;

namespace {

const char* op_name(Op op) { return op_info(op).name.data(); }
const char* dtype_name(Dtype d) { return dtype_info(d).name.data(); }

}  // namespace

// A misplaced op is a malformed call (an Argument error), before the
// declared-op check: MPI's names say where each op belongs.
void Window::Impl::check_admits(Function f, Op op) {
  if (function_admits(f, op)) return;
  std::string hint = op == Op::NoOp                ? " (NO_OP only reads: use get_accumulate or fetch_and_op)"
                     : op_info(op).operands == 2 ? " (use rmw2)"
                     : op == Op::Inc             ? " (use rmw)"
                                                 : "";
  raise(ErrorCategory::Argument,
        std::string("op ") + op_name(op) + " is not valid for " + std::string(function_name(f)) + hint);
}

void Window::Impl::access(int target) {
  s.check_live();
  s.check_rank(target);
  if (epochs.grants(target)) return;  // a passive epoch: nothing to record, no Post to match
  bool await_post;
  {
    std::lock_guard lk(epochs.mutex);
    epochs.state.check_access(target);
    await_post = epochs.state.started() && !epochs.post_matched[target];
  }
  if (await_post) match_post(target);
}

// The checked places of a put or get, each handed to move(where, offset,
// bytes) (one, or one per region it crosses on a dynamic window); none
// when there is nothing to move (PROC_NULL, or no bytes).
template <class F>
void Window::Impl::place(std::size_t count, Dtype dtype, int target, std::int64_t disp, F&& move) {
  if (target == kProcNull) return s.check_live();
  access(target);
  const std::size_t bytes = checked_mul(count, dtype_info(dtype).size, "count x itemsize");
  if (bytes == 0) return (void)addressing->locate(target, disp, 0, 0);
  each_piece(*addressing, target, disp, bytes, 1, move);
}

void Window::Impl::put(const void* origin, std::size_t count, Dtype dtype, int target, std::int64_t disp,
                       const RequestPtr& request) {
  place(count, dtype, target, disp, [&](const Where& w, std::size_t at, std::size_t n) {
    path->put(w, static_cast<const std::byte*>(origin) + at, n, request);
  });
}

void Window::Impl::get(void* result, std::size_t count, Dtype dtype, int target, std::int64_t disp,
                       const RequestPtr& request) {
  place(count, dtype, target, disp, [&](const Where& w, std::size_t at, std::size_t n) {
    path->get(w, static_cast<std::byte*>(result) + at, n, request);
  });
}

void Window::Impl::check_atomic(const AtomicCall& c) const {
  if (!op_applies(c.op, c.dtype))
    raise(ErrorCategory::Unsupported,
          std::string("op ") + op_name(c.op) + " is not defined for dtype " + dtype_name(c.dtype));
  if (!s.declared.contains(c.function, c.op))
    raise(ErrorCategory::OpSet, std::string(function_name(c.function)) + ":" + op_name(c.op) +
                                    " is outside the window's declared accumulate_ops (" + s.declared.str() + ")");
  const int operands = op_info(c.op).operands;
  if ((operands >= 1 && !c.origin && c.count) || (operands >= 2 && !c.origin2 && c.count))
    raise(ErrorCategory::Argument,
          std::string("op ") + op_name(c.op) + " needs " + std::to_string(operands) + " origin operand(s)");
  if ((c.function == Function::Rmw || c.function == Function::Rmw2) && c.count == 0)
    raise(ErrorCategory::Argument, "Rmw/Rmw2 need count >= 1");
}

void Window::Impl::atomic(const AtomicCall& c, int target, std::int64_t disp, const RequestPtr& request) {
  check_atomic(c);
  if (target == kProcNull) return s.check_live();
  access(target);
  const std::size_t esize = dtype_info(c.dtype).size;
  const std::size_t bytes = checked_mul(c.count, esize, "count x itemsize");
  if (c.count == 0) return (void)addressing->locate(target, disp, 0, 0);
  // Across regions attached side by side, each region's elements are one
  // call (pieces never split an element).
  each_piece(*addressing, target, disp, bytes, esize, [&](const Where& w, std::size_t done, std::size_t n) {
    const auto at = [&](auto* base) { return base ? base + done : base; };
    path->accumulate(w,
                     {c.function, c.op, at(static_cast<const std::byte*>(c.origin)),
                      at(static_cast<const std::byte*>(c.origin2)), at(static_cast<std::byte*>(c.result)), n / esize,
                      c.dtype},
                     request);
  });
}

// ---- the public calls ---------------------------------------------------------

void Window::put(const void* origin, std::size_t count, Dtype dtype, int target, std::int64_t disp,
                 Request* request) {
  auto state = request_state_for(request);
  impl_->put(origin, count, dtype, target, disp, state);
  if (request) *request = Request(state, impl_->s.endpoint, target, impl_->s.life_of(target));
}

void Window::get(void* result, std::size_t count, Dtype dtype, int target, std::int64_t disp, Request* request) {
  auto state = request_state_for(request);
  impl_->get(result, count, dtype, target, disp, state);
  if (request) *request = Request(state, impl_->s.endpoint, target, impl_->s.life_of(target));
}

void Window::accumulate(const void* origin, std::size_t count, Dtype dtype, int target, std::int64_t disp, Op op,
                        Request* request) {
  Impl::check_admits(Function::Accumulate, op);
  auto state = request_state_for(request);
  impl_->atomic({Function::Accumulate, op, origin, nullptr, nullptr, count, dtype}, target, disp, state);
  if (request) *request = Request(state, impl_->s.endpoint, target, impl_->s.life_of(target));
}

void Window::get_accumulate(const void* origin, void* result, std::size_t count, Dtype dtype, int target,
                            std::int64_t disp, Op op, Request* request) {
  Impl::check_admits(Function::GetAccumulate, op);
  auto state = request_state_for(request);
  impl_->atomic({Function::GetAccumulate, op, origin, nullptr, result, count, dtype}, target, disp, state);
  if (request) *request = Request(state, impl_->s.endpoint, target, impl_->s.life_of(target));
}

void Window::fetch_and_op(const void* origin, void* result, Dtype dtype, int target, std::int64_t disp, Op op,
                          Request* request) {
  Impl::check_admits(Function::FetchAndOp, op);
  auto state = request_state_for(request);
  impl_->atomic({Function::FetchAndOp, op, origin, nullptr, result, 1, dtype}, target, disp, state);
  if (request) *request = Request(state, impl_->s.endpoint, target, impl_->s.life_of(target));
}

void Window::compare_and_swap(const void* origin, const void* compare, void* result, Dtype dtype, int target,
                              std::int64_t disp, Request* request) {
  // MPI's origin is the value swapped in and compare the comperand; the
  // generalised form takes (comperand, swaperand).
  auto state = request_state_for(request);
  impl_->atomic({Function::CompareAndSwap, Op::CswapEq, compare, origin, result, 1, dtype}, target, disp, state);
  if (request) *request = Request(state, impl_->s.endpoint, target, impl_->s.life_of(target));
}

void Window::rmw(Op op, const void* origin, void* result, std::size_t count, Dtype dtype, int target,
                 std::int64_t disp, unsigned assertion, Request* request) {
  Impl::check_admits(Function::Rmw, op);
  auto state = request_state_for(request);
  impl_->implicit_epoch(target, assertion, [&] {
    impl_->atomic({Function::Rmw, op, origin, nullptr, result, count, dtype}, target, disp, state);
  });
  if (request) *request = Request(state, impl_->s.endpoint, target, impl_->s.life_of(target));
}

void Window::rmw2(Op op, const void* origin, const void* origin2, void* result, std::size_t count, Dtype dtype,
                  int target, std::int64_t disp, unsigned assertion, Request* request) {
  Impl::check_admits(Function::Rmw2, op);
  auto state = request_state_for(request);
  impl_->implicit_epoch(target, assertion, [&] {
    impl_->atomic({Function::Rmw2, op, origin, origin2, result, count, dtype}, target, disp, state);
  });
  if (request) *request = Request(state, impl_->s.endpoint, target, impl_->s.life_of(target));
}

}  // namespace onesided
