// Pairing single-block layouts into one loop nest (nest.hpp).
//
// Each side's dims are taken innermost first. At every step the smallest
// current count c divides every side's current count, or the layouts do not
// pair as a nest; each side's dim (k, stride) splits into an inner (c,
// stride), the step's loop, and an outer (k / c, stride * c), still to pair.
// A split is exact: element n lies where it did. The loops whose strides
// continue the chunk on every side then join the chunk, and loops that
// continue each other on every side merge.
#include "layout/nest.hpp"

#include <algorithm>

namespace onesided::detail {
namespace {

// Generous: a strided view of up to 8 dims, split a few times.
constexpr std::size_t kMaxSideDims = 8;
constexpr std::size_t kMaxSteps = 16;

template <std::size_t N>
struct Step {
  std::uint64_t count;
  std::array<std::int64_t, N> stride;
};

}  // namespace

template <std::size_t N>
std::optional<Nest<N>> nest_of(const std::array<const Layout*, N>& layouts) {
  Nest<N> out;
  std::int64_t itemsize = 0;
  std::array<std::array<Layout::Dim, kMaxSideDims>, N> dims{};  // innermost first
  std::array<std::size_t, N> ndims{}, at{};
  std::array<Layout::Dim, N> cur{};
  bool any = false;
  for (std::size_t s = 0; s < N; ++s) {
    const Layout* l = layouts[s];
    if (!l) continue;
    if (l->blocks().size() != 1) return std::nullopt;
    const Layout::Block& b = l->blocks()[0];
    if (b.dims.size() > kMaxSideDims) return std::nullopt;
    itemsize = static_cast<std::int64_t>(dtype_info(l->dtype()).size);
    out.start[s] = b.offset;
    ndims[s] = b.dims.size();
    std::reverse_copy(b.dims.begin(), b.dims.end(), dims[s].begin());
    cur[s] = dims[s][0];
    any = true;
  }
  if (!any) return std::nullopt;

  std::array<Step<N>, kMaxSteps> steps{};
  std::size_t nsteps = 0;
  for (;;) {
    std::size_t active = 0, done = 0;
    std::uint64_t c = UINT64_MAX;
    for (std::size_t s = 0; s < N; ++s) {
      if (!layouts[s]) continue;
      ++active;
      if (at[s] == ndims[s]) {
        ++done;
        continue;
      }
      c = std::min(c, cur[s].count);
    }
    if (done == active) break;
    if (done != 0 || c == 0) return std::nullopt;  // unequal counts: the caller checked, but never walk past
    Step<N> step{c, {}};
    for (std::size_t s = 0; s < N; ++s) {
      if (!layouts[s]) continue;
      if (cur[s].count % c != 0) return std::nullopt;
      step.stride[s] = cur[s].stride;
      if (cur[s].count == c) {
        if (++at[s] < ndims[s]) cur[s] = dims[s][at[s]];
      } else {
        // c < count and c divides it, so stride * c spans no more than the
        // dim did: it fits where the layout's offsets were checked to fit.
        cur[s] = {cur[s].count / c, cur[s].stride * static_cast<std::int64_t>(c)};
      }
    }
    if (c == 1) continue;  // a lone element's dim: no loop
    if (nsteps == kMaxSteps) return std::nullopt;
    steps[nsteps++] = step;
  }

  // The chunk: the innermost loops that are contiguous on every side.
  std::uint64_t chunk = static_cast<std::uint64_t>(itemsize);
  std::size_t first = 0;
  auto continues_chunk = [&](const Step<N>& st) {
    for (std::size_t s = 0; s < N; ++s)
      if (layouts[s] && st.stride[s] != static_cast<std::int64_t>(chunk)) return false;
    return true;
  };
  while (first < nsteps && continues_chunk(steps[first])) chunk *= steps[first++].count;
  out.chunk = chunk;

  // The other loops, merged where the outer continues the inner everywhere.
  std::array<Step<N>, kMaxSteps> loops{};
  std::size_t nloops = 0;
  for (std::size_t i = first; i < nsteps; ++i) {
    if (nloops) {
      Step<N>& inner = loops[nloops - 1];
      bool merges = true;
      for (std::size_t s = 0; s < N; ++s)
        if (layouts[s] && steps[i].stride[s] != inner.stride[s] * static_cast<std::int64_t>(inner.count))
          merges = false;
      if (merges) {
        inner.count *= steps[i].count;  // <= the element count
        continue;
      }
    }
    loops[nloops++] = steps[i];
  }
  if (nloops > Nest<N>::kMaxDims) return std::nullopt;
  out.dims = nloops;
  for (std::size_t d = 0; d < nloops; ++d) {  // outermost first
    const Step<N>& st = loops[nloops - 1 - d];
    out.count[d] = st.count;
    for (std::size_t s = 0; s < N; ++s) out.stride[s][d] = st.stride[s];
  }
  return out;
}

template std::optional<Nest<2>> nest_of<2>(const std::array<const Layout*, 2>&);
template std::optional<Nest<3>> nest_of<3>(const std::array<const Layout*, 3>&);

}  // namespace onesided::detail
