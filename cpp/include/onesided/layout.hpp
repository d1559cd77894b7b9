// Which elements of a buffer an operation reads or writes, and in which
// order: numpy's strided views and MPI's derived datatypes, in one form.
//
// A Layout is a list of blocks of elements of one Dtype. A block is a box
// as numpy describes a view: the element with index (i_0, ..., i_k) lies at
// byte `offset + i_0 * stride_0 + ... + i_k * stride_k`, for 0 <= i_j <
// count_j; a block's elements are visited in C order (the last index
// fastest), the blocks in list order. Offsets and strides are bytes, of any
// sign, relative to a base the call names (an origin buffer's first
// element; a target's `disp * disp_unit`).
//
// Two layouts are paired element by element in visiting order: a put of
// origin layout O to target layout T moves O's n-th element to T's n-th.
// Layouts are normalised when built (dims of count 1 dropped, dims that
// continue each other merged, adjacent runs joined), so a contiguous range
// is one run however it was described, and a column of a C-ordered matrix
// is one block with one dim.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "onesided/types.hpp"

namespace onesided {

class Layout {
 public:
  struct Dim {
    std::uint64_t count = 0;
    std::int64_t stride = 0;  // bytes
  };
  struct Block {
    std::int64_t offset = 0;  // bytes
    std::vector<Dim> dims;    // outermost first; none: one element
  };

  Layout() = default;  // no elements
  // Checks that every byte offset the blocks reach, and the number of
  // elements, fit in 63 bits (an Argument error otherwise).
  Layout(Dtype dtype, std::vector<Block> blocks);
  // `count` elements from offset 0, contiguous.
  static Layout contiguous(Dtype dtype, std::size_t count);
  // One block: numpy's (offset, shape, strides) of a view.
  static Layout strided(Dtype dtype, std::int64_t offset, std::span<const std::uint64_t> shape,
                        std::span<const std::int64_t> strides);

  Dtype dtype() const { return dtype_; }
  std::size_t count() const { return count_; }
  // The bytes the elements occupy lie in [lo, hi); lo == hi == 0 when empty.
  std::int64_t lo() const { return lo_; }
  std::int64_t hi() const { return hi_; }
  // Contiguous runs of elements, after normalising.
  std::size_t runs() const { return runs_; }
  // One run starting at offset 0 (or no elements).
  bool is_contiguous() const { return runs_ <= 1 && lo_ == 0; }
  // Whether some byte belongs to two elements (stride 0, crossing blocks):
  // MPI forbids it for target and result layouts.
  bool overlaps() const;
  const std::vector<Block>& blocks() const { return blocks_; }

 private:
  Dtype dtype_ = Dtype::UInt8;
  std::vector<Block> blocks_;  // normalised: every block has >= 1 dim, no count 0 or 1 dims but a lone one
  std::size_t count_ = 0;
  std::size_t runs_ = 0;
  std::int64_t lo_ = 0, hi_ = 0;
};

}  // namespace onesided
