// The new value of one element under each op: the one definition of every
// op's meaning, shared by the software kernels and the CPU-atomic kernels.
#pragma once

#include <complex>
#include <cstdint>
#include <type_traits>

#include "onesided/types.hpp"

namespace onesided::detail {

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
    case Op::MaxLoc:
    case Op::MinLoc: break;  // pairs only: the overload below
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

// MPI's pair types (types.hpp): a value and its index.
template <class T>
concept ValueIndexPair = requires(T p) {
  p.value;
  p.index;
};

// The new value of a pair under the ops that apply to pairs. MAXLOC and
// MINLOC as MPI 4.1 section 6.9.4 defines them: the larger (smaller) value
// with its index, and on equal values the smaller index, for both. A pair is
// replaced whole (padding included), so no op can tear one.
template <ValueIndexPair T>
T combine(Op op, T t, T a, T /*b*/) {
  switch (op) {
    case Op::MaxLoc:
      if (a.value > t.value || (a.value == t.value && a.index < t.index)) return a;
      return t;
    case Op::MinLoc:
      if (a.value < t.value || (a.value == t.value && a.index < t.index)) return a;
      return t;
    case Op::Replace: return a;
    default: return t;  // NO_OP; no other op applies to pairs (op_applies)
  }
}

}  // namespace onesided::detail
