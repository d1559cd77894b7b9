// Building a Layout: checks that every offset fits in 63 bits, then
// normalises so that later walks visit as few runs as the data allows.
#include "onesided/layout.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "layout/runs.hpp"
#include "onesided/error.hpp"

namespace onesided {
namespace {

using i128 = __int128;
constexpr i128 kMin = std::numeric_limits<std::int64_t>::min();
constexpr i128 kMax = std::numeric_limits<std::int64_t>::max();

[[noreturn]] void too_far(const char* what) {
  raise(ErrorCategory::Argument, std::string("layout: ") + what + " does not fit in 63 bits");
}

std::uint64_t checked_count_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  if (__builtin_mul_overflow(a, b, &r) || r > static_cast<std::uint64_t>(kMax)) too_far("the number of elements");
  return r;
}

// A block's dims without count-1 dims, with dims that continue each other
// merged (outer stride == inner count x inner stride), innermost last; a
// lone element is one dim of count 1.
std::vector<Layout::Dim> merged(const std::vector<Layout::Dim>& dims, std::int64_t itemsize) {
  std::vector<Layout::Dim> out;
  for (const auto& d : dims) {
    if (d.count == 1) continue;
    if (!out.empty()) {
      const Layout::Dim& inner = d;
      Layout::Dim& outer = out.back();
      if (static_cast<i128>(inner.count) * inner.stride == outer.stride) {
        outer = {checked_count_mul(outer.count, inner.count), inner.stride};
        continue;
      }
    }
    out.push_back(d);
  }
  if (out.empty()) out.push_back({1, itemsize});
  return out;
}

// A block whose elements form one run: one dim, elements side by side.
bool is_run(const Layout::Block& b, std::int64_t itemsize) {
  return b.dims.size() == 1 && (b.dims[0].stride == itemsize || b.dims[0].count == 1);
}

}  // namespace

Layout::Layout(Dtype dtype, std::vector<Block> blocks) : dtype_(dtype) {
  const auto itemsize = static_cast<std::int64_t>(dtype_info(dtype).size);
  i128 lo = kMax, hi = kMin;
  for (auto& b : blocks) {
    if (std::any_of(b.dims.begin(), b.dims.end(), [](const Dim& d) { return d.count == 0; })) continue;
    // The extent first, from the dims as given: it is what bounds checks use.
    i128 blo = b.offset, bhi = b.offset;
    for (const auto& d : b.dims) {
      if (d.count > static_cast<std::uint64_t>(kMax)) too_far("a count");
      const i128 span = static_cast<i128>(d.count - 1) * d.stride;
      (span < 0 ? blo : bhi) += span;
      if (blo < kMin || bhi > kMax) too_far("an element's offset");
    }
    if (bhi + itemsize > kMax) too_far("an element's end");
    lo = std::min(lo, blo);
    hi = std::max(hi, bhi + itemsize);

    Block n{b.offset, merged(b.dims, itemsize)};
    std::uint64_t elements = 1;
    for (const auto& d : n.dims) elements = checked_count_mul(elements, d.count);
    if (elements > static_cast<std::uint64_t>(kMax) - count_) too_far("the number of elements");
    count_ += elements;
    // Join a run to the run before it when it starts where that one ends.
    if (!blocks_.empty() && is_run(n, itemsize) && is_run(blocks_.back(), itemsize)) {
      Dim& prev = blocks_.back().dims[0];
      if (static_cast<i128>(blocks_.back().offset) + static_cast<i128>(prev.count) * itemsize == n.offset) {
        prev = {prev.count + n.dims[0].count, itemsize};
        continue;
      }
    }
    blocks_.push_back(std::move(n));
  }
  if (count_ == 0) {
    blocks_.clear();
    return;
  }
  lo_ = static_cast<std::int64_t>(lo);
  hi_ = static_cast<std::int64_t>(hi);
  for (const auto& b : blocks_) runs_ += detail::runs_of(b, itemsize);
}

Layout Layout::contiguous(Dtype dtype, std::size_t count) {
  if (count == 0) return Layout(dtype, {});
  return Layout(dtype, {Block{0, {Dim{count, static_cast<std::int64_t>(dtype_info(dtype).size)}}}});
}

Layout Layout::strided(Dtype dtype, std::int64_t offset, std::span<const std::uint64_t> shape,
                       std::span<const std::int64_t> strides) {
  if (shape.size() != strides.size())
    raise(ErrorCategory::Argument, "layout: shape and strides have different lengths");
  Block b{offset, {}};
  for (std::size_t i = 0; i < shape.size(); ++i) b.dims.push_back({shape[i], strides[i]});
  return Layout(dtype, {std::move(b)});
}

bool Layout::overlaps() const {
  // Runs that come in increasing order, each after the last, cannot
  // overlap: one pass decides the common case; anything else is sorted.
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;
  std::int64_t end = std::numeric_limits<std::int64_t>::min();
  bool sorted = true;
  for (detail::RunCursor c(*this); !c.done(); c.next_run()) {
    const std::int64_t start = c.offset();
    const auto stop = static_cast<std::int64_t>(start + static_cast<std::int64_t>(c.left()));
    if (start < end) sorted = false;
    end = std::max(end, stop);
    spans.emplace_back(start, stop);
  }
  if (sorted) return false;
  std::sort(spans.begin(), spans.end());
  for (std::size_t i = 1; i < spans.size(); ++i)
    if (spans[i].first < spans[i - 1].second) return true;
  return false;
}

}  // namespace onesided
