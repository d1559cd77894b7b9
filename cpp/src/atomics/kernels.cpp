#include "atomics/kernels.hpp"

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "atomics/combine.hpp"

namespace onesided::kernels {
namespace {

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
    const T n = detail::combine(op, t, a, b);
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
