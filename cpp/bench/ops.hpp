// One operation plus its completion, for each kind of column: the CPU floor,
// onesided's public API and raw libfabric calls. run_row (rows.hpp) calls
// them in its timed loops.
#pragma once

#include <atomic>
#include <cstdint>

#include "onesided/epoch.hpp"
#include "onesided/window.hpp"
#include "raw_fabric.hpp"

namespace onesided_bench {

using onesided::Dtype;
using onesided::Op;
using onesided::Window;

// CPU floor: the instruction each operation boils down to on shared memory,
// with the full fence a flush implies (the lock-prefixed read-modify-writes
// are fences already; a put or get needs one after its store or load).
struct FloorOps {
  std::atomic<std::int64_t>* cell;
  void put(std::int64_t v, int i) {
    cell[i].store(v, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  std::int64_t get(int i) {
    const std::int64_t v = cell[i].load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return v;
  }
  void accumulate(std::int64_t v, int i) { cell[i].fetch_add(v, std::memory_order_seq_cst); }
  std::int64_t get_accumulate(std::int64_t v, int i) { return cell[i].fetch_add(v, std::memory_order_seq_cst); }
  std::int64_t fetch_and_op(std::int64_t v, int i) { return cell[i].fetch_add(v, std::memory_order_seq_cst); }
  std::int64_t cas(std::int64_t cmp, std::int64_t swp, int i) {
    cell[i].compare_exchange_strong(cmp, swp, std::memory_order_seq_cst);
    return cmp;  // the old value either way
  }
  std::int64_t rmw_inc(int i) { return cell[i].fetch_add(1, std::memory_order_seq_cst); }
  std::int64_t mswap(std::int64_t mask, std::int64_t swp, int i) {
    std::int64_t old = cell[i].load(std::memory_order_relaxed);
    while (!cell[i].compare_exchange_weak(old, (old & ~mask) | (swp & mask), std::memory_order_seq_cst,
                                          std::memory_order_relaxed)) {
    }
    return old;
  }
};

// onesided: the public API, each op followed by flush(target).
struct OnesidedOps {
  Window* w;
  static constexpr int t = 1;
  std::int64_t o = 0, c = 0, r = 0;
  void put(std::int64_t v, int i) {
    o = v;
    w->put(&o, 1, Dtype::Int64, t, i);
    w->flush(t);
  }
  std::int64_t get(int i) {
    w->get(&r, 1, Dtype::Int64, t, i);
    w->flush(t);
    return r;
  }
  void accumulate(std::int64_t v, int i) {
    o = v;
    w->accumulate(&o, 1, Dtype::Int64, t, i, Op::Sum);
    w->flush(t);
  }
  std::int64_t get_accumulate(std::int64_t v, int i) {
    o = v;
    w->get_accumulate(&o, &r, 1, Dtype::Int64, t, i, Op::Sum);
    w->flush(t);
    return r;
  }
  std::int64_t fetch_and_op(std::int64_t v, int i) {
    o = v;
    w->fetch_and_op(&o, &r, Dtype::Int64, t, i, Op::Sum);
    w->flush(t);
    return r;
  }
  std::int64_t cas(std::int64_t cmp, std::int64_t swp, int i) {
    c = cmp;
    o = swp;
    w->compare_and_swap(&o, &c, &r, Dtype::Int64, t, i);
    w->flush(t);
    return r;
  }
  std::int64_t rmw_inc(int i) {
    w->rmw(Op::Inc, nullptr, &r, 1, Dtype::Int64, t, i);
    w->flush(t);
    return r;
  }
  std::int64_t mswap(std::int64_t mask, std::int64_t swp, int i) {
    c = mask;
    o = swp;
    w->rmw2(Op::MaskSwap, &c, &o, &r, 1, Dtype::Int64, t, i);
    w->flush(t);
    return r;
  }
};

// onesided's Epoch handle (onesided/epoch.hpp) from lock_all(), each op
// followed by the handle's flush(target): the checks the epoch decided are
// not repeated, the bounds check and the op are inline.
struct EpochOps {
  onesided::Epoch e;
  static constexpr int t = 1;
  std::int64_t o = 0, c = 0, r = 0;
  void put(std::int64_t v, int i) {
    o = v;
    e.put(&o, 1, t, i);
    e.flush(t);
  }
  std::int64_t get(int i) {
    e.get(&r, 1, t, i);
    e.flush(t);
    return r;
  }
  void accumulate(std::int64_t v, int i) {
    o = v;
    e.accumulate(&o, 1, t, i, Op::Sum);
    e.flush(t);
  }
  std::int64_t get_accumulate(std::int64_t v, int i) {
    o = v;
    e.get_accumulate(&o, &r, 1, t, i, Op::Sum);
    e.flush(t);
    return r;
  }
  std::int64_t fetch_and_op(std::int64_t v, int i) {
    o = v;
    e.fetch_and_op(&o, &r, t, i, Op::Sum);
    e.flush(t);
    return r;
  }
  std::int64_t cas(std::int64_t cmp, std::int64_t swp, int i) {
    c = cmp;
    o = swp;
    e.compare_and_swap(&o, &c, &r, t, i);
    e.flush(t);
    return r;
  }
  std::int64_t rmw_inc(int i) {
    e.rmw<std::int64_t>(Op::Inc, nullptr, &r, 1, t, i);
    e.flush(t);
    return r;
  }
  std::int64_t mswap(std::int64_t mask, std::int64_t swp, int i) {
    c = mask;
    o = swp;
    e.rmw2(Op::MaskSwap, &c, &o, &r, 1, t, i);
    e.flush(t);
    return r;
  }
};

// Raw libfabric: each call posts one operation and waits for its completion.
struct RawOps {
  RawFabric* f;
  void put(std::int64_t v, int i) { f->put(v, i); }
  std::int64_t get(int i) { return f->get(i); }
  void accumulate(std::int64_t v, int i) { f->atomic_sum(v, i); }
  std::int64_t get_accumulate(std::int64_t v, int i) { return f->fetch_sum(v, i); }
  std::int64_t fetch_and_op(std::int64_t v, int i) { return f->fetch_sum(v, i); }
  std::int64_t cas(std::int64_t cmp, std::int64_t swp, int i) { return f->cswap(cmp, swp, i); }
  std::int64_t rmw_inc(int i) { return f->fetch_sum(1, i); }
  std::int64_t mswap(std::int64_t mask, std::int64_t swp, int i) { return f->mswap(mask, swp, i); }
};

}  // namespace onesided_bench
