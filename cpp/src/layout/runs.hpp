// Walking a Layout run by run, and several layouts in step.
//
// A run is a stretch of elements side by side in memory: the innermost dim
// of a block when its stride is the item size, else one element. RunCursor
// visits a layout's runs in its element order without materialising them;
// Pieces pairs up to three layouts element by element and yields the
// stretches where every one of them is contiguous, which is what a path
// can move or apply in one go.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "onesided/layout.hpp"

namespace onesided::detail {

inline bool inner_is_run(const Layout::Block& b, std::int64_t itemsize) {
  return b.dims.back().stride == itemsize || b.dims.back().count == 1;
}

inline std::size_t runs_of(const Layout::Block& b, std::int64_t itemsize) {
  const std::size_t outer = inner_is_run(b, itemsize) ? b.dims.size() - 1 : b.dims.size();
  std::size_t n = 1;
  for (std::size_t i = 0; i < outer; ++i) n *= b.dims[i].count;  // <= count(): no overflow
  return n;
}

class RunCursor {
 public:
  explicit RunCursor(const Layout& l)
      : l_(&l), itemsize_(static_cast<std::int64_t>(dtype_info(l.dtype()).size)) {
    start_block(0);
  }
  bool done() const { return block_ >= l_->blocks().size(); }
  // Byte offset of what is left of the current run, and how many bytes.
  std::int64_t offset() const { return run_ + static_cast<std::int64_t>(used_); }
  std::uint64_t left() const { return bytes_ - used_; }
  void advance(std::uint64_t n) {
    used_ += n;
    if (used_ == bytes_) next_run();
  }
  void next_run() {
    used_ = 0;
    const auto& dims = l_->blocks()[block_].dims;
    // An odometer over the outer dims, last fastest; the offset follows it.
    for (std::size_t j = outer_; j-- > 0;) {
      if (++index_[j] < dims[j].count) {
        run_ += dims[j].stride;
        return;
      }
      run_ -= static_cast<std::int64_t>(dims[j].count - 1) * dims[j].stride;
      index_[j] = 0;
    }
    start_block(block_ + 1);
  }

 private:
  void start_block(std::size_t b) {
    block_ = b;
    used_ = 0;
    if (done()) return;
    const Layout::Block& blk = l_->blocks()[b];
    const bool run = inner_is_run(blk, itemsize_);
    outer_ = run ? blk.dims.size() - 1 : blk.dims.size();
    index_.assign(outer_, 0);
    run_ = blk.offset;
    bytes_ = run ? blk.dims.back().count * static_cast<std::uint64_t>(itemsize_) : static_cast<std::uint64_t>(itemsize_);
  }

  const Layout* l_;
  std::int64_t itemsize_;
  std::size_t block_ = 0, outer_ = 0;
  std::vector<std::uint64_t> index_;
  std::int64_t run_ = 0;
  std::uint64_t bytes_ = 0, used_ = 0;
};

// Up to three layouts of equal byte size walked in step (a null layout
// stands for an operand the call does not have: its offsets are 0).
template <std::size_t N>
class Pieces {
 public:
  explicit Pieces(const std::array<const Layout*, N>& layouts) {
    for (std::size_t i = 0; i < N; ++i)
      if (layouts[i]) cursors_[i].emplace_back(*layouts[i]);
  }
  // Calls f(offsets, bytes) for each stretch contiguous in every layout.
  template <class F>
  void for_each(F&& f) {
    for (;;) {
      // The caller pairs layouts of equal size, so all end together; the
      // first to end stops the walk whatever the others hold.
      std::uint64_t n = UINT64_MAX;
      for (auto& c : cursors_) {
        if (c.empty()) continue;
        if (c[0].done()) return;
        n = std::min(n, c[0].left());
      }
      if (n == UINT64_MAX) return;
      std::array<std::int64_t, N> at{};
      for (std::size_t i = 0; i < N; ++i)
        if (!cursors_[i].empty()) at[i] = cursors_[i][0].offset();
      f(at, n);
      for (auto& c : cursors_)
        if (!c.empty()) c[0].advance(n);
    }
  }

 private:
  std::array<std::vector<RunCursor>, N> cursors_;  // 0 or 1 each (RunCursor has no empty state)
};

}  // namespace onesided::detail
