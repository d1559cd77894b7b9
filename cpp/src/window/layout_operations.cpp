// The data calls on non-contiguous data: the layouts are checked here, at
// the edge (same dtype and count on every side, no byte written twice, the
// whole target extent inside what the target exposes), before anything is
// sent; then the layouts are walked in step and every stretch that is
// contiguous on all sides goes to the window's path: as one loop nest
// (layout/nest.hpp) when the layouts pair so, which a path may run as plain
// loops, else stretch by stretch (layout/runs.hpp).
//
// Semantics kept: the stretches of one call are issued in element order,
// so accumulate-style ops stay atomic per element (each stretch is one
// accumulate on the path, which is atomic per element) and ordered per
// element as accumulate_ordering asks; one Request covers every stretch.
#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "layout/nest.hpp"
#include "layout/runs.hpp"
#include "window/impl.hpp"

namespace onesided {

using namespace detail;

namespace {

// Pieces are handed to the path in batches, so a layout of a million runs
// costs a bounded amount of memory.
constexpr std::size_t kBatch = 1024;

std::string dtype_str(Dtype d) { return std::string(dtype_info(d).name); }

// Every layout of a call: one dtype, one element count (onesided converts
// nothing), and no byte written twice where the call writes.
void check_match(const Layout& a, const char* a_name, const Layout& b, const char* b_name) {
  if (a.dtype() != b.dtype())
    raise(ErrorCategory::Argument, std::string(a_name) + " layout holds " + dtype_str(a.dtype()) + " but " + b_name +
                                       " layout holds " + dtype_str(b.dtype()) + " (onesided does not convert)");
  if (a.count() != b.count())
    raise(ErrorCategory::Argument, std::string(a_name) + " layout has " + std::to_string(a.count()) +
                                       " elements but " + b_name + " layout has " + std::to_string(b.count()));
}

void check_disjoint(const Layout& l, const char* name) {
  if (l.runs() > 1 && l.overlaps())
    raise(ErrorCategory::Argument, std::string(name) +
                                       " layout touches some bytes twice (MPI forbids overlapping elements in a "
                                       "target or result)");
}

// A buffer's layout and the target's walked in step, handed to `hand` in
// batches of pieces (target offsets from the Where, which starts at the
// target layout's first byte).
template <class Hand>
void in_batches(const Layout& buffer, const Layout& target, Hand&& hand) {
  std::vector<Piece> batch;
  batch.reserve(std::min(kBatch, buffer.runs() + target.runs()));
  Pieces<2>({&buffer, &target}).for_each([&](const std::array<std::int64_t, 2>& at, std::uint64_t n) {
    batch.push_back({at[0], static_cast<std::uint64_t>(at[1] - target.lo()), n});
    if (batch.size() == kBatch) hand(std::span<const Piece>(batch)), batch.clear();
  });
  if (!batch.empty()) hand(std::span<const Piece>(batch));
}

// The nest of a buffer's layout and the target's, its target offsets from
// the Where (which starts at the target layout's first byte), as
// in_batches gives them.
std::optional<Nest<2>> target_nest(const Layout& buffer, const Layout& target) {
  auto nest = nest_of<2>({&buffer, &target});
  if (nest) nest->start[1] -= target.lo();
  return nest;
}

}  // namespace

// The checked place of a target layout's extent; nullopt for PROC_NULL.
std::optional<Where> Window::Impl::place(int target, std::int64_t disp, const Layout& tl) {
  if (target == kProcNull) {
    s.check_live();
    return std::nullopt;
  }
  access(target);
  return addressing->locate(target, disp, tl.lo(), static_cast<std::size_t>(tl.hi() - tl.lo()));
}

void Window::Impl::put(const std::byte* origin, const Layout& ol, int target, std::int64_t disp, const Layout& tl,
                       const RequestPtr& request) {
  check_match(ol, "origin", tl, "target");
  check_disjoint(tl, "target");
  const auto w = place(target, disp, tl);
  if (!w) return;
  if (const auto nest = target_nest(ol, tl)) return path->put_nest(*w, origin, *nest, request);
  in_batches(ol, tl, [&](std::span<const Piece> pieces) { path->put_pieces(*w, origin, pieces, request); });
}

void Window::Impl::get(std::byte* result, const Layout& rl, int target, std::int64_t disp, const Layout& tl,
                       const RequestPtr& request) {
  check_match(rl, "result", tl, "target");
  check_disjoint(rl, "result");
  check_disjoint(tl, "target");
  const auto w = place(target, disp, tl);
  if (!w) return;
  if (const auto nest = target_nest(rl, tl)) return path->get_nest(*w, result, *nest, request);
  in_batches(rl, tl, [&](std::span<const Piece> pieces) { path->get_pieces(*w, result, pieces, request); });
}

void Window::Impl::atomic(const AtomicCall& c, const Layout* ol, const Layout* rl, int target, std::int64_t disp,
                          const Layout& tl, const RequestPtr& request) {
  if (ol) check_match(*ol, "origin", tl, "target");
  if (rl) {
    check_match(*rl, "result", tl, "target");
    check_disjoint(*rl, "result");
  }
  check_disjoint(tl, "target");
  if (tl.dtype() != c.dtype)
    raise(ErrorCategory::Argument, "target layout holds " + dtype_str(tl.dtype()) + " but the call's dtype is " +
                                       dtype_str(c.dtype));
  check_atomic(AtomicCall{c.function, c.op, c.origin, c.origin2, c.result, tl.count(), c.dtype});
  const auto place_of = place(target, disp, tl);
  if (!place_of) return;
  const Where& w = *place_of;
  const AtomicCall bases{c.function, c.op, c.origin, nullptr, c.result, 0, c.dtype};
  // An absent operand walks no layout (its offsets stay 0 and unused).
  const std::array<const Layout*, 3> sides{c.origin ? ol : nullptr, c.result ? rl : nullptr, &tl};
  if (auto nest = nest_of<3>(sides)) {
    nest->start[2] -= tl.lo();  // the target's offsets from the Where, as below
    return path->accumulate_nest(w, bases, *nest, request);
  }
  Pieces<3>(sides).for_each([&](const std::array<std::int64_t, 3>& at, std::uint64_t n) {
    path->accumulate(shifted(w, static_cast<std::uint64_t>(at[2] - tl.lo())), chunk_of(bases, at, n), request);
  });
}

// ---- the public calls ---------------------------------------------------------

void Window::put(const void* origin, const Layout& origin_layout, int target, std::int64_t disp,
                 const Layout& target_layout, Request* request) {
  auto state = request_state_for(request);
  impl_->put(static_cast<const std::byte*>(origin), origin_layout, target, disp, target_layout, state);
  if (request) *request = Request(state, impl_->s.endpoint, target, impl_->s.life_of(target));
}

void Window::get(void* result, const Layout& result_layout, int target, std::int64_t disp,
                 const Layout& target_layout, Request* request) {
  auto state = request_state_for(request);
  impl_->get(static_cast<std::byte*>(result), result_layout, target, disp, target_layout, state);
  if (request) *request = Request(state, impl_->s.endpoint, target, impl_->s.life_of(target));
}

void Window::accumulate(const void* origin, const Layout& origin_layout, int target, std::int64_t disp,
                        const Layout& target_layout, Op op, Request* request) {
  Impl::check_admits(Function::Accumulate, op);
  auto state = request_state_for(request);
  impl_->atomic({Function::Accumulate, op, origin, nullptr, nullptr, 0, origin_layout.dtype()}, &origin_layout,
                nullptr, target, disp, target_layout, state);
  if (request) *request = Request(state, impl_->s.endpoint, target, impl_->s.life_of(target));
}

void Window::get_accumulate(const void* origin, const Layout& origin_layout, void* result,
                            const Layout& result_layout, int target, std::int64_t disp, const Layout& target_layout,
                            Op op, Request* request) {
  Impl::check_admits(Function::GetAccumulate, op);
  auto state = request_state_for(request);
  impl_->atomic({Function::GetAccumulate, op, origin, nullptr, result, 0, result_layout.dtype()}, &origin_layout,
                &result_layout, target, disp, target_layout, state);
  if (request) *request = Request(state, impl_->s.endpoint, target, impl_->s.life_of(target));
}

}  // namespace onesided
