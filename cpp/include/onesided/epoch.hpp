// Epoch: a handle on one open passive-target epoch of a Window, which
// carries what the window's checks decided when the epoch was opened, so a
// call on it does only what MPI requires per call: the target range check,
// then the copy or the CPU atomic, inline, with no virtual call, mutex or
// allocation.
//
//   win->lock_all();
//   onesided::Epoch e = win->epoch_all();     // or lock(t) + win->epoch(t)
//   e.fetch_and_op(&one, &old, t, disp, Op::Sum);
//   e.flush(t);
//   win->unlock_all();                        // e is closed from here on
//
// Invariants:
//  - Decided once, at epoch(t) / epoch_all(): the window is live, made in
//    this process (not inherited across fork), the epoch is open for the
//    handle's targets (lock(t): that target; lock_all: every rank), and
//    whether the window is on the plain shared-memory path (every rank on
//    this host, every segment mapped here; no nasty mode, no race checker).
//    Only there is the handle "direct": it holds each target's base
//    address, extent and disp_unit and touches that memory itself. On any
//    other window every call is forwarded to the Window's own method of the
//    same name (same checks, same completion), decided once, here.
//  - Memory touched (direct): the target's segment in the window's shared
//    mapping, by the calling thread, nothing else; flush touches this rank's
//    publication word (memory/publication.hpp in the core).
//  - Per call (direct), in this order: the epoch is still the one the
//    handle was made in (two relaxed loads: the window's epoch generation
//    for these targets, bumped by unlock(t) / unlock_all() / free(), and the
//    process's fork generation; a mismatch raises an Epoch error); the
//    target is one of the handle's; the op is one the window declared
//    (accumulate_ops) and one the handle does inline for T; the range
//    disp >= 0, disp x disp_unit + count x sizeof(T) <= extent, computed
//    without overflow. Whatever fails the last three goes to the Window's
//    call, which raises the error it would raise anyway (Bounds, Argument,
//    OpSet, Epoch, ...) before touching memory, or does the call (a
//    PROC_NULL target, an op the handle has no inline form for, an element
//    the CPU cannot update lock-free). So both roads use one memory through
//    one kind of access: the shared-memory path updates an aligned element
//    of 1, 2, 4 or 8 bytes with the same lock-free atomics as here, and any
//    other element under its stripe lock, which the handle never does
//    itself. No two paths on one memory.
//  - Skipped per call, because the epoch fixes them: the window's epoch
//    state and its mutex, the lock-free passive-epoch mirror, the virtual
//    call on the path, the dead-rank check (a direct call never waits, so a
//    dead target cannot hang it; unlock reports the dead rank), Requests.
//  - Order and completion (direct), as the shared-memory path's: each
//    operation has taken effect when its call returns; accumulate-style
//    ones are sequentially consistent CPU atomics, so every
//    accumulate_ordering is kept; put and get are plain copies, neither
//    atomic nor ordered (MPI's rule). flush() publishes this rank's plain
//    stores: a release increment of its publication word, which whoever
//    learns of the flush through a later synchronisation acquires (the
//    same one operation as Window::flush on this path).
//  - Lifetime: the handle is a small value, copyable, usable from any
//    thread of this process; it must not outlive its Window object (like a
//    reference). After the epoch closes every call raises an Epoch error,
//    also once a new epoch has opened (take a new handle for it). Closing
//    one target's lock ends only the handles of that target.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "onesided/error.hpp"
#include "onesided/types.hpp"
#include "onesided/window.hpp"

namespace onesided {

// The element types an Epoch takes: those of the op x dtype table that the
// CPU updates with one lock-free instruction when aligned (bool, long
// double, complex and pair elements go through the Window).
template <class T>
concept EpochElement = (std::is_integral_v<T> || std::is_floating_point_v<T>) && !std::is_same_v<T, bool> &&
                       (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8) &&
                       dtype_of_type<T>().has_value();

class Epoch {
 public:
  // One target as the epoch found it (direct handles only).
  struct Target {
    std::byte* base;           // its segment in this process's mapping
    std::uint64_t extent;      // bytes it exposes
    std::uint64_t disp_unit;
  };

  // No epoch: every call raises an Epoch error.
  Epoch() = default;

  // Whether calls are loads, stores and CPU atomics done here (the
  // shared-memory path), or forwarded to the Window's methods.
  bool direct() const noexcept { return direct_; }
  // Whether the epoch this handle was made in is still open.
  bool open() const noexcept {
    return generation_->load(std::memory_order_relaxed) == opened_ &&
           forks_->load(std::memory_order_relaxed) == forks_at_open_;
  }

  template <EpochElement T>
  void put(const T* origin, std::size_t count, int target, std::int64_t disp) {
    check_open();
    if (std::byte* p = place<T>(target, disp, count)) [[likely]] {
      std::memmove(p, origin, count * sizeof(T));
      return;
    }
    window_->put(origin, count, kDtype<T>, target, disp);
  }
  template <EpochElement T>
  void get(T* result, std::size_t count, int target, std::int64_t disp) {
    check_open();
    if (const std::byte* p = place<T>(target, disp, count)) [[likely]] {
      std::memmove(result, p, count * sizeof(T));
      return;
    }
    window_->get(result, count, kDtype<T>, target, disp);
  }

  // The accumulate family, as Window's, with the element type for the dtype.
  template <EpochElement T>
  void accumulate(const T* origin, std::size_t count, int target, std::int64_t disp, Op op) {
    check_open();
    if (std::byte* p = atomic_place<T>(Function::Accumulate, op, origin, nullptr, count, target, disp)) [[likely]]
      return each<T>(op, p, origin, nullptr, nullptr, count);
    window_->accumulate(origin, count, kDtype<T>, target, disp, op);
  }
  template <EpochElement T>
  void get_accumulate(const T* origin, T* result, std::size_t count, int target, std::int64_t disp, Op op) {
    check_open();
    if (std::byte* p = atomic_place<T>(Function::GetAccumulate, op, origin, nullptr, count, target, disp)) [[likely]]
      return each<T>(op, p, origin, nullptr, result, count);
    window_->get_accumulate(origin, result, count, kDtype<T>, target, disp, op);
  }
  template <EpochElement T>
  void fetch_and_op(const T* origin, T* result, int target, std::int64_t disp, Op op) {
    check_open();
    if (std::byte* p = atomic_place<T>(Function::FetchAndOp, op, origin, nullptr, 1, target, disp)) [[likely]]
      return each<T>(op, p, origin, nullptr, result, 1);
    window_->fetch_and_op(origin, result, kDtype<T>, target, disp, op);
  }
  // MPI's argument order: `origin` is swapped in where the target equals `*compare`.
  template <EpochElement T>
  void compare_and_swap(const T* origin, const T* compare, T* result, int target, std::int64_t disp) {
    check_open();
    if (std::byte* p = atomic_place<T>(Function::CompareAndSwap, Op::CswapEq, compare, origin, 1, target, disp))
        [[likely]]
      return each<T>(Op::CswapEq, p, compare, origin, result, 1);
    window_->compare_and_swap(origin, compare, result, kDtype<T>, target, disp);
  }
  // Seed 002's Rmw and Rmw2 within this epoch (no implicit-epoch assertion:
  // the handle is an epoch already).
  template <EpochElement T>
  void rmw(Op op, const T* origin, T* result, std::size_t count, int target, std::int64_t disp) {
    check_open();
    if (count != 0)
      if (std::byte* p = atomic_place<T>(Function::Rmw, op, origin, nullptr, count, target, disp)) [[likely]]
        return each<T>(op, p, origin, nullptr, result, count);
    window_->rmw(op, origin, result, count, kDtype<T>, target, disp);
  }
  template <EpochElement T>
  void rmw2(Op op, const T* origin, const T* origin2, T* result, std::size_t count, int target,
            std::int64_t disp) {
    check_open();
    if (count != 0)
      if (std::byte* p = atomic_place<T>(Function::Rmw2, op, origin, origin2, count, target, disp)) [[likely]]
        return each<T>(op, p, origin, origin2, result, count);
    window_->rmw2(op, origin, origin2, result, count, kDtype<T>, target, disp);
  }

  // Window::flush and flush_all: on the shared-memory path the operations
  // are complete already, and this publishes this rank's plain stores.
  void flush(int target) {
    check_open();
    if (direct_ && static_cast<unsigned>(target) < nranks_) [[likely]]
      return (void)publication_->fetch_add(1, std::memory_order_release);
    window_->flush(target);
  }
  void flush_all() {
    check_open();
    if (direct_) [[likely]]
      return (void)publication_->fetch_add(1, std::memory_order_release);
    window_->flush_all();
  }

 private:
  friend class Window;
  friend class Window::Impl;

  template <class T>
  static constexpr Dtype kDtype = *dtype_of_type<T>();
  // The ops done inline for T, as a bit per Op; any other op goes to the Window.
  template <class T>
  static constexpr std::uint32_t inline_ops() {
    auto bit = [](Op op) { return std::uint32_t{1} << static_cast<unsigned>(op); };
    std::uint32_t m = bit(Op::Sum) | bit(Op::Replace) | bit(Op::NoOp) | bit(Op::Max) | bit(Op::Min) |
                      bit(Op::CswapEq);
    if constexpr (std::is_integral_v<T>)
      m |= bit(Op::Inc) | bit(Op::Band) | bit(Op::Bor) | bit(Op::Bxor) | bit(Op::MaskSwap);
    return m;
  }
  static_assert(kNumOps <= 32, "an Epoch keeps the ops of one function in 32 bits");

  void check_open() const {
    if (!open()) [[unlikely]] raise_closed();
  }
  [[noreturn]] void raise_closed() const;

  // The target bytes of `count` elements at `disp`, checked, or null when
  // the call must go to the Window (not direct, not one of the handle's
  // targets, out of range: the Window then does it or raises).
  template <class T>
  std::byte* place(int target, std::int64_t disp, std::size_t count) const {
    const unsigned k = static_cast<unsigned>(target) - first_;
    if (!direct_ || k >= count_) [[unlikely]] return nullptr;
    const Target& t = targets_[static_cast<unsigned>(target)];
    std::uint64_t off, bytes, end;
    if (disp < 0 || __builtin_mul_overflow(static_cast<std::uint64_t>(disp), t.disp_unit, &off) ||
        __builtin_mul_overflow(static_cast<std::uint64_t>(count), sizeof(T), &bytes) ||
        __builtin_add_overflow(off, bytes, &end) || end > t.extent) [[unlikely]]
      return nullptr;
    return t.base + off;
  }
  // place(), for an accumulate-style call the handle can do itself: the op
  // declared for `f` and inline for T, the operands it reads present, the
  // elements aligned (else the shared-memory path takes a stripe lock).
  template <class T>
  std::byte* atomic_place(Function f, Op op, const T* a, const T* b, std::size_t count, int target,
                          std::int64_t disp) const {
    const auto o = static_cast<unsigned>(op);
    if (o >= 32 || !((admitted_[static_cast<std::size_t>(f)] & inline_ops<T>()) >> o & 1u)) [[unlikely]]
      return nullptr;
    const int operands = op_info(op).operands;
    if ((operands >= 1 && !a) || (operands >= 2 && !b)) [[unlikely]] return nullptr;
    std::byte* p = place<T>(target, disp, count);
    if (reinterpret_cast<std::uintptr_t>(p) % sizeof(T) != 0) [[unlikely]] return nullptr;
    return p;
  }
  template <class T>
  static void each(Op op, std::byte* p, const T* a, const T* b, T* result, std::size_t count) {
    const int operands = op_info(op).operands;
    for (std::size_t i = 0; i < count; ++i) {
      const T old = one<T>(op, p + i * sizeof(T), operands >= 1 ? a[i] : T{}, operands >= 2 ? b[i] : T{});
      if (result) result[i] = old;
    }
  }
  // One aligned element, with the instruction the shared-memory path uses
  // for it (the core's atomics/cpu_atomics.cpp): fetch_add for integer SUM
  // and INC (wrapping, on the unsigned bits), exchange for REPLACE, a load
  // for NO_OP, else a compare-exchange loop; all sequentially consistent.
  template <class T>
  static T one(Op op, std::byte* p, T a, T b) {
    using U = std::conditional_t<sizeof(T) == 1, std::uint8_t,
              std::conditional_t<sizeof(T) == 2, std::uint16_t,
              std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>>;
    std::atomic_ref<U> ref(*reinterpret_cast<U*>(p));
    if constexpr (std::is_integral_v<T>) {
      if (op == Op::Sum || op == Op::Inc)
        return static_cast<T>(ref.fetch_add(op == Op::Inc ? U(1) : static_cast<U>(a), std::memory_order_seq_cst));
    }
    if (op == Op::Replace) return std::bit_cast<T>(ref.exchange(std::bit_cast<U>(a), std::memory_order_seq_cst));
    if (op == Op::NoOp) return std::bit_cast<T>(ref.load(std::memory_order_seq_cst));
    U old = ref.load(std::memory_order_relaxed);
    for (;;) {
      const U want = std::bit_cast<U>(new_value<T>(op, std::bit_cast<T>(old), a, b));
      // A compare-and-swap that changes nothing still writes: a
      // read-modify-write, ordered like every other (as the core's).
      if (ref.compare_exchange_weak(old, want, std::memory_order_seq_cst, std::memory_order_relaxed))
        return std::bit_cast<T>(old);
    }
  }
  // The ops of inline_ops(), as the core's atomics/combine.hpp defines them.
  template <class T>
  static T new_value(Op op, T t, T a, T b) {
    switch (op) {
      case Op::Sum: return static_cast<T>(t + a);  // floating point only: integers took fetch_add
      case Op::Max: return a > t ? a : t;
      case Op::Min: return a < t ? a : t;
      case Op::CswapEq: return a == t ? b : t;
      default: break;
    }
    if constexpr (std::is_integral_v<T>) {
      switch (op) {
        case Op::Band: return static_cast<T>(t & a);
        case Op::Bor: return static_cast<T>(t | a);
        case Op::Bxor: return static_cast<T>(t ^ a);
        case Op::MaskSwap: return static_cast<T>((t & ~a) | (b & a));
        default: break;
      }
    }
    return t;  // not reached: atomic_place admits only inline_ops()
  }

  // A closed word: a default Epoch compares its generation 0 with 1.
  inline static const std::atomic<std::uint64_t> kNoEpoch{1};

  Window* window_ = nullptr;
  const std::atomic<std::uint64_t>* generation_ = &kNoEpoch;  // the window's, for these targets
  std::uint64_t opened_ = 0;
  const std::atomic<std::uint64_t>* forks_ = &kNoEpoch;       // the process's fork generation
  std::uint64_t forks_at_open_ = 0;
  const Target* targets_ = nullptr;                           // every rank's, indexed by rank
  std::atomic<std::uint64_t>* publication_ = nullptr;         // this rank's publication word
  unsigned first_ = 0, count_ = 0;                            // targets [first_, first_ + count_)
  unsigned nranks_ = 0;
  std::uint32_t admitted_[kNumFunctions] = {};                // ops declared, per function
  bool direct_ = false;
};

}  // namespace onesided
