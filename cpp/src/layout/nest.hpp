// Layouts paired element by element as one loop nest: the form in which a
// strided transfer costs what its bytes do.
//
// Pieces (runs.hpp) walks any layouts, one stretch at a time, through
// cursors; a strided view of numpy or an MPI vector type is far simpler: one
// block on every side, whose dims can be split until every side has the same
// counts. Then the whole transfer is `chunk` bytes, contiguous on every side,
// repeated over at most kMaxDims loops with a stride per side, and a path can
// run it as plain nested loops (copy_nest below) or hand it on as pieces
// (for_each_piece) without a cursor per stretch.
//
// nest_of() returns nothing when the layouts do not pair so (several blocks,
// counts that do not divide each other, more loops than kMaxDims): the
// caller then walks them with Pieces. Both forms visit the same stretches in
// the same element order.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>

#include "onesided/layout.hpp"

namespace onesided::detail {

template <std::size_t N>
struct Nest {
  static constexpr std::size_t kMaxDims = 4;
  // Bytes contiguous on every side at the innermost; a multiple of the item size.
  std::uint64_t chunk = 0;
  // Each side's first byte: offset from its base (a buffer's first element;
  // for the target, the target layout's lowest byte, as Pieces gives it).
  std::array<std::int64_t, N> start{};
  // The loops, outermost first; dims == 0: one chunk.
  std::size_t dims = 0;
  std::array<std::uint64_t, kMaxDims> count{};
  std::array<std::array<std::int64_t, kMaxDims>, N> stride{};

  std::uint64_t chunks() const {
    std::uint64_t n = 1;
    for (std::size_t d = 0; d < dims; ++d) n *= count[d];  // <= the layouts' element count
    return n;
  }
  // f(offsets, bytes) for every chunk, in element order (an odometer, the
  // last loop fastest), as Pieces::for_each would call it.
  template <class F>
  void for_each_chunk(F&& f) const {
    std::array<std::uint64_t, kMaxDims> i{};
    std::array<std::int64_t, N> at = start;
    for (;;) {
      f(at, chunk);
      std::size_t d = dims;
      for (;;) {
        if (d == 0) return;
        --d;
        if (++i[d] < count[d]) {
          for (std::size_t s = 0; s < N; ++s) at[s] += stride[s][d];
          break;
        }
        for (std::size_t s = 0; s < N; ++s) at[s] -= static_cast<std::int64_t>(count[d] - 1) * stride[s][d];
        i[d] = 0;
      }
    }
  }
};

// The nest of up to three layouts of one dtype and element count (a null
// layout: an operand the call does not have, offsets 0 and strides 0), or
// nothing when they do not pair as one nest.
template <std::size_t N>
std::optional<Nest<N>> nest_of(const std::array<const Layout*, N>& layouts);

extern template std::optional<Nest<2>> nest_of<2>(const std::array<const Layout*, 2>&);
extern template std::optional<Nest<3>> nest_of<3>(const std::array<const Layout*, 3>&);

namespace nest_detail {

// One chunk of a fixed size: a load and a store (one load first, so a
// chunk that overlaps itself stays intact, as memmove would keep it).
template <std::size_t kBytes>
inline void copy_fixed(std::byte* to, const std::byte* from) {
  unsigned char v[kBytes];
  std::memcpy(v, from, kBytes);
  std::memcpy(to, v, kBytes);
}

template <std::size_t kBytes>
void copy_loops(std::byte* to, const std::byte* from, const Nest<2>& n, std::size_t to_side, std::size_t from_side) {
  // The innermost loop runs straight; the outer ones as an odometer.
  const std::size_t inner = n.dims - 1;
  const std::uint64_t inner_count = n.count[inner];
  const std::int64_t ts = n.stride[to_side][inner], fs = n.stride[from_side][inner];
  std::array<std::uint64_t, Nest<2>::kMaxDims> i{};
  std::byte* t = to + n.start[to_side];
  const std::byte* f = from + n.start[from_side];
  for (;;) {
    std::byte* tt = t;
    const std::byte* ff = f;
    if constexpr (kBytes == 0) {
      for (std::uint64_t k = 0; k < inner_count; ++k, tt += ts, ff += fs) std::memmove(tt, ff, n.chunk);
    } else {
      for (std::uint64_t k = 0; k < inner_count; ++k, tt += ts, ff += fs) copy_fixed<kBytes>(tt, ff);
    }
    std::size_t d = inner;
    for (;;) {
      if (d == 0) return;
      --d;
      if (++i[d] < n.count[d]) {
        t += n.stride[to_side][d];
        f += n.stride[from_side][d];
        break;
      }
      t -= static_cast<std::int64_t>(n.count[d] - 1) * n.stride[to_side][d];
      f -= static_cast<std::int64_t>(n.count[d] - 1) * n.stride[from_side][d];
      i[d] = 0;
    }
  }
}

}  // namespace nest_detail

// Copies a nest from `from` (its side `from_side`) to `to` (side `to_side`)
// with loads and stores: the shared-memory path's strided put and get.
inline void copy_nest(std::byte* to, const std::byte* from, const Nest<2>& n, std::size_t to_side,
                      std::size_t from_side) {
  using namespace nest_detail;
  if (n.dims == 0) {
    std::memmove(to + n.start[to_side], from + n.start[from_side], n.chunk);
    return;
  }
  switch (n.chunk) {
    case 1: return copy_loops<1>(to, from, n, to_side, from_side);
    case 2: return copy_loops<2>(to, from, n, to_side, from_side);
    case 4: return copy_loops<4>(to, from, n, to_side, from_side);
    case 8: return copy_loops<8>(to, from, n, to_side, from_side);
    case 16: return copy_loops<16>(to, from, n, to_side, from_side);
    default: return copy_loops<0>(to, from, n, to_side, from_side);
  }
}

}  // namespace onesided::detail
