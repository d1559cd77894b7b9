#include <gtest/gtest.h>

#include <complex>
#include <cstring>
#include <cstdint>
#include <limits>

#include "atomics/cpu_atomics.hpp"
#include "atomics/kernels.hpp"

using namespace onesided;

TEST(Kernels, SumWrapsLikeNumpyAndFetchesOldValue) {
  std::int32_t target[2] = {std::numeric_limits<std::int32_t>::max(), 5};
  std::int32_t origin[2] = {1, 7};
  std::int32_t result[2] = {};
  kernels::apply(Op::Sum, Dtype::Int32, target, origin, nullptr, result, 2);
  EXPECT_EQ(target[0], std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(target[1], 12);
  EXPECT_EQ(result[0], std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(result[1], 5);
}

TEST(Kernels, SmallUnsignedProductDoesNotOverflowThroughIntPromotion) {
  std::uint16_t target = 65535, origin = 65535;
  kernels::apply(Op::Prod, Dtype::UInt16, &target, &origin, nullptr, nullptr, 1);
  EXPECT_EQ(target, static_cast<std::uint16_t>(65535u * 65535u));
}

TEST(Kernels, CompareAndSwapVariantsFollowLibfabricOperandOrder) {
  // comperand OP target holds -> target = swaperand
  std::int64_t t = 10, cmp = 5, swap = 99, old = 0;
  kernels::apply(Op::CswapLt, Dtype::Int64, &t, &cmp, &swap, &old, 1);
  EXPECT_EQ(t, 99);  // 5 < 10
  EXPECT_EQ(old, 10);
  t = 10;
  kernels::apply(Op::CswapGt, Dtype::Int64, &t, &cmp, &swap, &old, 1);
  EXPECT_EQ(t, 10);  // 5 > 10 is false
  kernels::apply(Op::CswapEq, Dtype::Int64, &t, &t, &swap, &old, 1);
  EXPECT_EQ(t, 99);
}

TEST(Kernels, MaskSwapReplacesOnlyMaskedBits) {
  std::uint8_t t = 0b1010'1010, mask = 0b0000'1111, swap = 0b0101'0101;
  kernels::apply(Op::MaskSwap, Dtype::UInt8, &t, &mask, &swap, nullptr, 1);
  EXPECT_EQ(t, 0b1010'0101);
}

TEST(Kernels, LogicalOpsYieldZeroOrOne) {
  std::int32_t t = 7, a = 3;
  kernels::apply(Op::Land, Dtype::Int32, &t, &a, nullptr, nullptr, 1);
  EXPECT_EQ(t, 1);
  bool bt = true, ba = true;
  kernels::apply(Op::Lxor, Dtype::Bool, &bt, &ba, nullptr, nullptr, 1);
  EXPECT_FALSE(bt);
}

TEST(Kernels, ComplexSumAndUnalignedElements) {
  alignas(16) unsigned char raw[1 + 2 * sizeof(std::complex<double>)] = {};
  std::complex<double> v(1.5, -2.0);
  std::memcpy(raw + 1, &v, sizeof v);
  std::complex<double> add(0.5, 1.0);
  kernels::apply(Op::Sum, Dtype::Complex128, raw + 1, &add, nullptr, nullptr, 1);
  std::memcpy(&v, raw + 1, sizeof v);
  EXPECT_EQ(v, std::complex<double>(2.0, -1.0));
}

TEST(Kernels, NoOpReadsWithoutWriting) {
  double t = 3.25, r = 0;
  kernels::apply(Op::NoOp, Dtype::Float64, &t, nullptr, nullptr, &r, 1);
  EXPECT_EQ(r, 3.25);
  EXPECT_EQ(t, 3.25);
}

TEST(OpTable, ApplicabilityFollowsMpiRules) {
  EXPECT_FALSE(op_applies(Op::Band, Dtype::Float64));
  EXPECT_FALSE(op_applies(Op::Max, Dtype::Complex64));
  EXPECT_FALSE(op_applies(Op::Sum, Dtype::Bool));
  EXPECT_TRUE(op_applies(Op::Lor, Dtype::Bool));
  EXPECT_TRUE(op_applies(Op::Replace, Dtype::CLongDouble));
  EXPECT_EQ(dtype_from_name("uint16"), Dtype::UInt16);
  EXPECT_EQ(op_from_name("comp_swap_le"), Op::CswapLe);
  EXPECT_FALSE(op_from_name("nonsense").has_value());
}

// MPI 4.1 section 6.9.4: MAXLOC and MINLOC keep the extremum with its index;
// on equal values the smaller index wins, for both ops.
template <class Pair>
void check_loc(Op op, Pair t, Pair a, Pair want, bool cpu) {
  Pair old{};
  if (cpu) {
    static detail::cpu::Stripes stripes{};
    alignas(16) Pair target = t;
    detail::cpu::apply(op, *dtype_of_type<Pair>(), reinterpret_cast<std::byte*>(&target), 0, &a, nullptr, &old, 1,
                       stripes);
    t = target;
  } else {
    kernels::apply(op, *dtype_of_type<Pair>(), &t, &a, nullptr, &old, 1);
  }
  EXPECT_EQ(t.value, want.value) << op_info(op).name << (cpu ? " cpu" : " kernel");
  EXPECT_EQ(t.index, want.index) << op_info(op).name << (cpu ? " cpu" : " kernel");
}

TEST(Kernels, MaxLocAndMinLocTakeTheSmallerIndexOnTies) {
  for (bool cpu : {false, true}) {
    // A larger (smaller) value wins with its index, whatever the indices.
    check_loc<IntInt>(Op::MaxLoc, {3, 1}, {5, 9}, {5, 9}, cpu);
    check_loc<IntInt>(Op::MaxLoc, {5, 1}, {3, 0}, {5, 1}, cpu);
    check_loc<IntInt>(Op::MinLoc, {3, 1}, {5, 0}, {3, 1}, cpu);
    check_loc<IntInt>(Op::MinLoc, {5, 7}, {3, 9}, {3, 9}, cpu);
    // Ties: the smaller index, from the target or from the origin.
    check_loc<IntInt>(Op::MaxLoc, {4, 2}, {4, 1}, {4, 1}, cpu);
    check_loc<IntInt>(Op::MaxLoc, {4, 1}, {4, 2}, {4, 1}, cpu);
    check_loc<IntInt>(Op::MinLoc, {4, 2}, {4, 1}, {4, 1}, cpu);
    check_loc<IntInt>(Op::MinLoc, {4, 1}, {4, 2}, {4, 1}, cpu);
    // Every pair type, on both sides of the lock-free size.
    check_loc<ShortInt>(Op::MinLoc, {-2, 0, 5}, {-2, 0, 3}, {-2, 0, 3}, cpu);
    check_loc<FloatInt>(Op::MaxLoc, {1.5f, 4}, {2.5f, 6}, {2.5f, 6}, cpu);
    check_loc<LongInt>(Op::MaxLoc, {1LL << 40, 2}, {1LL << 40, 1}, {1LL << 40, 1}, cpu);
    check_loc<DoubleInt>(Op::MinLoc, {0.25, 3, 0}, {0.5, 1, 0}, {0.25, 3, 0}, cpu);
    check_loc<LongDoubleInt>(Op::MaxLoc, {2.0L, 8, {}}, {2.0L, 7, {}}, {2.0L, 7, {}}, cpu);
  }
}

TEST(Kernels, PairReplaceAndNoOpMoveWholePairs) {
  DoubleInt t{1.5, 3, 0}, a{-7.0, 11, 0}, old{};
  kernels::apply(Op::Replace, Dtype::DoubleIntPair, &t, &a, nullptr, &old, 1);
  EXPECT_EQ(old.value, 1.5);
  EXPECT_EQ(old.index, 3);
  EXPECT_EQ(t.value, -7.0);
  EXPECT_EQ(t.index, 11);
  kernels::apply(Op::NoOp, Dtype::DoubleIntPair, &t, nullptr, nullptr, &old, 1);
  EXPECT_EQ(old.value, -7.0);
  EXPECT_EQ(old.index, 11);
}

TEST(OpTable, PairsTakeOnlyTheLocOpsReplaceAndNoOp) {
  for (const auto& o : kOps)
    EXPECT_EQ(op_applies(o.id, Dtype::FloatIntPair),
              o.id == Op::MaxLoc || o.id == Op::MinLoc || o.id == Op::Replace || o.id == Op::NoOp)
        << o.name;
  EXPECT_FALSE(op_applies(Op::MaxLoc, Dtype::Float64));
  EXPECT_FALSE(function_admits(Function::Rmw, Op::MinLoc));
  EXPECT_TRUE(function_admits(Function::FetchAndOp, Op::MaxLoc));
  EXPECT_EQ(pair_value(Dtype::LongDoubleIntPair), Dtype::LongDouble);
  EXPECT_EQ(pair_index_offset(Dtype::DoubleIntPair), 8u);
  EXPECT_EQ(pair_index_offset(Dtype::ShortIntPair), 4u);
  EXPECT_FALSE(pair_value(Dtype::Float64).has_value());
}

namespace {

// A small value of element type T for seed k: exact in every type, so the
// two implementations' results compare with ==.
template <class T>
T small_value(int k) {
  if constexpr (std::is_same_v<T, bool>) {
    return k % 2 != 0;
  } else if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, long_double>) {
    return static_cast<T>(k % 7);
  } else if constexpr (requires { T{}.index; }) {
    return T{static_cast<decltype(T{}.value)>(k % 5), k % 3};
  } else {
    return T(static_cast<typename T::value_type>(k % 5), static_cast<typename T::value_type>(k % 3));
  }
}

template <class T>
bool same(const T& a, const T& b) {
  if constexpr (requires { a.index; })
    return a.value == b.value && a.index == b.index;
  else
    return a == b;
}

}  // namespace

// The CPU-atomics path (lock-free runs of aligned elements, stripe-locked
// misaligned and long ones) computes what the kernels compute, for every op
// and dtype it applies to, with and without a result, as one run and (ops
// of at most one operand) as one-element chunks of a strided call.
TEST(Kernels, CpuAtomicsMatchTheKernelsForEveryOpAndDtype) {
  static detail::cpu::Stripes stripes{};
  constexpr std::size_t n = 5;
  for (const DtypeInfo& d : kDtypes)
    for (const OpInfo& o : kOps) {
      if (!op_applies(o.id, d.id)) continue;
      visit_dtype(d.id, [&](auto tag) {
        using T = decltype(tag);
        for (std::size_t shift : {std::size_t{0}, std::size_t{1}})
          for (bool fetch : {false, true}) {
            T target[n], a[n], b[n], want[n], want_old[n], old[n];
            for (std::size_t i = 0; i < n; ++i) {
              target[i] = small_value<T>(static_cast<int>(3 * i + 1));
              a[i] = small_value<T>(static_cast<int>(5 * i + 2));
              b[i] = small_value<T>(static_cast<int>(i + 4));
              want[i] = target[i];
            }
            kernels::apply(o.id, d.id, want, a, b, fetch ? want_old : nullptr, n);
            // The same elements at an offset of `shift` bytes in a buffer.
            alignas(16) std::byte buffer[sizeof(T) * n + 16];
            std::memcpy(buffer + shift, target, sizeof target);
            detail::cpu::apply(o.id, d.id, buffer + shift, shift, a, b, fetch ? old : nullptr, n, stripes);
            std::memcpy(target, buffer + shift, sizeof target);
            for (std::size_t i = 0; i < n; ++i) {
              EXPECT_TRUE(same(target[i], want[i])) << o.name << " " << d.name << " shift " << shift << " element " << i;
              if (fetch) EXPECT_TRUE(same(old[i], want_old[i])) << o.name << " " << d.name << " old, element " << i;
            }
            if (o.operands > 1) continue;  // apply_chunks: strided calls have no second operand
            // The same as one-element chunks, last first (a column).
            for (std::size_t i = 0; i < n; ++i) {
              target[i] = small_value<T>(static_cast<int>(3 * i + 1));
              old[i] = T{};
            }
            std::memcpy(buffer + shift, target, sizeof target);
            detail::cpu::Chunk chunks[n];
            for (std::size_t i = 0; i < n; ++i) {
              const auto at = static_cast<std::int64_t>((n - 1 - i) * sizeof(T));
              chunks[i] = {at, at, at};
            }
            detail::cpu::apply_chunks(o.id, d.id, buffer + shift, shift, reinterpret_cast<const std::byte*>(a),
                                      fetch ? reinterpret_cast<std::byte*>(old) : nullptr, chunks, sizeof(T), stripes);
            std::memcpy(target, buffer + shift, sizeof target);
            for (std::size_t i = 0; i < n; ++i) {
              EXPECT_TRUE(same(target[i], want[i])) << o.name << " " << d.name << " chunks, shift " << shift << " element " << i;
              if (fetch) EXPECT_TRUE(same(old[i], want_old[i])) << o.name << " " << d.name << " chunks, old, element " << i;
            }
          }
      });
    }
}
