#include "atomics/cpu_atomics.hpp"

#include <bit>
#include <cstring>
#include <thread>
#include <type_traits>

#include "atomics/combine.hpp"

namespace onesided::detail::cpu {
namespace {

template <std::size_t N>
struct Bits {};
template <>
struct Bits<1> { using type = std::uint8_t; };
template <>
struct Bits<2> { using type = std::uint16_t; };
template <>
struct Bits<4> { using type = std::uint32_t; };
template <>
struct Bits<8> { using type = std::uint64_t; };

class StripeGuard {
 public:
  StripeGuard(Stripes& s, std::uint64_t offset)
      : word_(s.word[(offset / 16) % kStripes]) {
    for (unsigned spins = 0; word_.exchange(1, std::memory_order_acquire) != 0; ++spins)
      while (word_.load(std::memory_order_relaxed) != 0)
        if (++spins > 64) std::this_thread::yield();  // the holder may be descheduled
  }
  ~StripeGuard() { word_.store(0, std::memory_order_release); }

 private:
  std::atomic_ref<std::uint32_t> word_;
};

// One element under a stripe lock (any size, any alignment).
template <class T>
void locked(Op op, std::byte* target, std::uint64_t offset, const std::byte* a, const std::byte* b,
            std::byte* result, Stripes& stripes) {
  StripeGuard guard(stripes, offset);
  T t, x{}, y{};
  std::memcpy(&t, target, sizeof(T));
  if (a) std::memcpy(&x, a, sizeof(T));
  if (b) std::memcpy(&y, b, sizeof(T));
  if (result) std::memcpy(result, &t, sizeof(T));
  if (op == Op::NoOp) return;
  const T n = combine(op, t, x, y);
  std::memcpy(target, &n, sizeof(T));
}

// Naturally aligned elements of 1-8 bytes, lock-free. `each(g)` calls
// g(cell, operand, operand2, result) for every element (null: none). The op
// is looked at once for all of them, so each element costs its atomic
// instruction and little else: fetch_add (integer SUM, INC), exchange
// (REPLACE), a load (NO_OP), else a compare-exchange loop over the
// element's bits (SUM, MAX and MIN with the op fixed at compile time).
template <class T, class Each>
void lockless(Op op, Each&& each) {
  using U = typename Bits<sizeof(T)>::type;
  auto value = [](const std::byte* p) {
    T x{};
    if (p) std::memcpy(&x, p, sizeof(T));
    return x;
  };
  auto keep = [](std::byte* r, U old) {
    if (r) std::memcpy(r, &old, sizeof(T));
  };
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (op == Op::Sum || op == Op::Inc) {  // wraps like combine(): unsigned bits
      const bool inc = op == Op::Inc;
      return each([&](U* cell, const std::byte* a, const std::byte*, std::byte* r) {
        const U add = inc ? U(1) : static_cast<U>(value(a));
        keep(r, std::atomic_ref<U>(*cell).fetch_add(add, std::memory_order_seq_cst));
      });
    }
  }
  if (op == Op::Replace)
    return each([&](U* cell, const std::byte* a, const std::byte*, std::byte* r) {
      keep(r, std::atomic_ref<U>(*cell).exchange(std::bit_cast<U>(value(a)), std::memory_order_seq_cst));
    });
  if (op == Op::NoOp)
    return each([&](U* cell, const std::byte*, const std::byte*, std::byte* r) {
      keep(r, std::atomic_ref<U>(*cell).load(std::memory_order_seq_cst));
    });
  auto update = [&](auto&& next) {
    each([&](U* cell, const std::byte* a, const std::byte* b, std::byte* r) {
      std::atomic_ref<U> ref(*cell);
      const T x = value(a), y = value(b);
      U old = ref.load(std::memory_order_relaxed);
      // Even when nothing changes (a failed compare-and-swap) the update is
      // a read-modify-write, so it is ordered like every other.
      while (!ref.compare_exchange_weak(old, std::bit_cast<U>(next(std::bit_cast<T>(old), x, y)),
                                        std::memory_order_seq_cst, std::memory_order_relaxed)) {
      }
      keep(r, old);
    });
  };
  // The reductions numerical codes use most, with the op a constant; the
  // rest through combine's switch.
  switch (op) {
    case Op::Sum: return update([](T t, T x, T y) { return combine(Op::Sum, t, x, y); });
    case Op::Max: return update([](T t, T x, T y) { return combine(Op::Max, t, x, y); });
    case Op::Min: return update([](T t, T x, T y) { return combine(Op::Min, t, x, y); });
    default: return update([op](T t, T x, T y) { return combine(op, t, x, y); });
  }
}

// The element sizes the CPU updates lock-free when aligned.
constexpr bool lock_free_size(std::size_t n) { return n == 1 || n == 2 || n == 4 || n == 8; }
template <class T>
constexpr bool kLockFreeSize = lock_free_size(sizeof(T));

template <class T>
bool aligned(const std::byte* p) {
  return reinterpret_cast<std::uintptr_t>(p) % sizeof(T) == 0;
}

}  // namespace

bool lock_free(Dtype d) { return lock_free_size(dtype_info(d).size); }

namespace {

// `count` elements of T from `target` (offset `target_offset` in the
// mapping that holds `stripes`), each atomically.
template <class T>
void apply_run(Op op, int operands, std::byte* target, std::uint64_t target_offset, const std::byte* a,
               const std::byte* b, std::byte* r, std::size_t count, Stripes& stripes) {
  if (operands < 1) a = nullptr;
  if (operands < 2) b = nullptr;
  if constexpr (kLockFreeSize<T>) {
    // The elements follow each other: all are aligned when the first is.
    if (aligned<T>(target))
      return lockless<T>(op, [&](auto&& g) {
        using U = typename Bits<sizeof(T)>::type;
        auto* cells = reinterpret_cast<U*>(target);
        for (std::size_t i = 0, at = 0; i < count; ++i, at += sizeof(T))
          g(cells + i, a ? a + at : nullptr, b ? b + at : nullptr, r ? r + at : nullptr);
      });
  }
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t at = i * sizeof(T);
    locked<T>(op, target + at, target_offset + at, a ? a + at : nullptr, b ? b + at : nullptr, r ? r + at : nullptr,
              stripes);
  }
}

template <class F>
void visit_element(Dtype d, F&& f) {
  visit_dtype(d, [&](auto tag) {
    using T0 = decltype(tag);
    f(std::type_identity<std::conditional_t<std::is_same_v<T0, bool>, std::uint8_t, T0>>{});
  });
}

}  // namespace

void apply(Op op, Dtype d, std::byte* target, std::uint64_t target_offset, const void* origin,
           const void* origin2, void* result, std::size_t count, Stripes& stripes) {
  const int operands = op_info(op).operands;
  visit_element(d, [&](auto type) {
    apply_run<typename decltype(type)::type>(op, operands, target, target_offset,
                                             static_cast<const std::byte*>(origin),
                                             static_cast<const std::byte*>(origin2), static_cast<std::byte*>(result),
                                             count, stripes);
  });
}

void apply_chunks(Op op, Dtype d, std::byte* target, std::uint64_t target_offset, const std::byte* origin,
                  std::byte* result, std::span<const Chunk> chunks, std::size_t bytes, Stripes& stripes) {
  const int operands = op_info(op).operands;
  if (operands < 1) origin = nullptr;
  visit_element(d, [&](auto type) {
    using T = typename decltype(type)::type;
    const std::size_t n = bytes / sizeof(T);
    if constexpr (kLockFreeSize<T>) {
      // A column is many one-element chunks: with every chunk aligned, the
      // op is looked at once for all of them.
      bool all_aligned = true;
      for (const Chunk& c : chunks) all_aligned = all_aligned && aligned<T>(target + c.target);
      if (all_aligned)
        return lockless<T>(op, [&](auto&& g) {
          using U = typename Bits<sizeof(T)>::type;
          for (const Chunk& c : chunks) {
            auto* cells = reinterpret_cast<U*>(target + c.target);
            for (std::size_t i = 0, at = 0; i < n; ++i, at += sizeof(T))
              g(cells + i, origin ? origin + c.origin + at : nullptr, nullptr,
                result ? result + c.result + at : nullptr);
          }
        });
    }
    for (const Chunk& c : chunks)
      apply_run<T>(op, operands, target + c.target, target_offset + static_cast<std::uint64_t>(c.target),
                   origin ? origin + c.origin : nullptr, nullptr, result ? result + c.result : nullptr, n, stripes);
  });
}

}  // namespace onesided::detail::cpu
