#include "kernels.hpp"

#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace onesided::kernels {
namespace {

template <class T>
inline constexpr bool is_complex_v = false;
template <class T>
inline constexpr bool is_complex_v<std::complex<T>> = true;

// Integer arithmetic wraps modulo 2^bits, as numpy's does; going through
// uint64 avoids signed-overflow UB and the promotion of small unsigned types
// to (signed) int.
template <class T>
T wrap_add(T x, T y) {
  return static_cast<T>(static_cast<std::uint64_t>(x) + static_cast<std::uint64_t>(y));
}
template <class T>
T wrap_mul(T x, T y) {
  return static_cast<T>(static_cast<std::uint64_t>(x) * static_cast<std::uint64_t>(y));
}

// New target value for one element: t is the target, a the origin operand, b
// the second operand. Ops that have no meaning for T were rejected by the
// caller through op_applies, so their branches are never reached.
template <class T>
T combine(Op op, T t, T a, T b) {
  constexpr bool integral = std::is_integral_v<T>;
  constexpr bool ordered = !is_complex_v<T>;
  switch (op) {
    case Op::Sum:
      if constexpr (integral) return wrap_add(t, a); else return t + a;
    case Op::Prod:
      if constexpr (integral) return wrap_mul(t, a); else return t * a;
    case Op::Inc:
      if constexpr (integral) return wrap_add(t, T(1)); else return t + T(1);
    case Op::Max:
      if constexpr (ordered) return a > t ? a : t;
      break;
    case Op::Min:
      if constexpr (ordered) return a < t ? a : t;
      break;
    case Op::Band:
      if constexpr (integral) return static_cast<T>(t & a);
      break;
    case Op::Bor:
      if constexpr (integral) return static_cast<T>(t | a);
      break;
    case Op::Bxor:
      if constexpr (integral) return static_cast<T>(t ^ a);
      break;
    case Op::MaskSwap:
      if constexpr (integral) return static_cast<T>((t & ~a) | (b & a));
      break;
    case Op::Land: return T((t != T{}) && (a != T{}));
    case Op::Lor: return T((t != T{}) || (a != T{}));
    case Op::Lxor: return T((t != T{}) != (a != T{}));
    case Op::Replace: return a;
    case Op::NoOp: return t;
    case Op::CswapEq: return a == t ? b : t;
    case Op::CswapNe: return a != t ? b : t;
    case Op::CswapLt:
      if constexpr (ordered) return a < t ? b : t;
      break;
    case Op::CswapLe:
      if constexpr (ordered) return a <= t ? b : t;
      break;
    case Op::CswapGt:
      if constexpr (ordered) return a > t ? b : t;
      break;
    case Op::CswapGe:
      if constexpr (ordered) return a >= t ? b : t;
      break;
  }
  return t;
}

template <class T>
void apply_typed(Op op, std::byte* target, const std::byte* origin, const std::byte* origin2,
                 std::byte* result, std::size_t count) {
  const int operands = op_info(op).operands;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t at = i * sizeof(T);
    T t, a{}, b{};
    std::memcpy(&t, target + at, sizeof(T));
    if (operands >= 1) std::memcpy(&a, origin + at, sizeof(T));
    if (operands >= 2) std::memcpy(&b, origin2 + at, sizeof(T));
    if (result) std::memcpy(result + at, &t, sizeof(T));
    if (op == Op::NoOp) continue;  // a read must not store, not even the same bytes
    const T n = combine(op, t, a, b);
    std::memcpy(target + at, &n, sizeof(T));
  }
}

}  // namespace

void apply(Op op, Dtype d, void* target, const void* origin, const void* origin2, void* result,
           std::size_t count) {
  visit_dtype(d, [&](auto tag) {
    using T = decltype(tag);
    // numpy stores bool as one byte holding 0 or 1; the logical ops below
    // produce exactly those, so a byte is the faithful element type.
    using S = std::conditional_t<std::is_same_v<T, bool>, std::uint8_t, T>;
    apply_typed<S>(op, static_cast<std::byte*>(target), static_cast<const std::byte*>(origin),
                   static_cast<const std::byte*>(origin2), static_cast<std::byte*>(result), count);
  });
}

}  // namespace onesided::kernels
