// The op x dtype table. This file is the single source of truth for which
// element types and which read-modify-write operations onesided knows, and
// which combinations are meaningful: the software kernels, native-support
// probing, the Python constants and the generated docs all iterate it.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

namespace onesided {

// Classes of element types; an op lists the classes it applies to.
enum DtypeClass : unsigned {
  kLogical = 1u << 0,
  kSigned = 1u << 1,
  kUnsigned = 1u << 2,
  kFloat = 1u << 3,
  kComplex = 1u << 4,
  kPair = 1u << 5,  // MPI's value-and-index pairs (MPI_2INT, MPI_DOUBLE_INT, ...)
};
inline constexpr unsigned kInteger = kSigned | kUnsigned;
inline constexpr unsigned kReal = kInteger | kFloat;
inline constexpr unsigned kNumeric = kReal | kComplex;
inline constexpr unsigned kAll = kNumeric | kLogical;

// One-token name so the table can write T{} for every element type.
using long_double = long double;

// MPI's pair types for MINLOC and MAXLOC, laid out as C lays out
// struct { value; int index; } (what MPI_SHORT_INT ... MPI_LONG_DOUBLE_INT
// describe and mpi4py maps to numpy records). The padding C would leave is
// a named member, so an element's every byte is a value bit and a pair of 8
// bytes moves as one 64-bit word; ops copy whole pairs, padding included.
struct ShortInt { std::int16_t value; std::int16_t pad; std::int32_t index; };
struct IntInt { std::int32_t value; std::int32_t index; };
struct LongInt { std::int64_t value; std::int32_t index; std::int32_t pad; };
struct FloatInt { float value; std::int32_t index; };
struct DoubleInt { double value; std::int32_t index; std::int32_t pad; };
struct LongDoubleInt { long double value; std::int32_t index; std::int32_t pad[3]; };

// X(enumerator, C++ element type, numpy dtype name, class)
#define ONESIDED_DTYPES(X)                                        \
  X(Bool, bool, "bool", kLogical)                                 \
  X(Int8, std::int8_t, "int8", kSigned)                           \
  X(Int16, std::int16_t, "int16", kSigned)                        \
  X(Int32, std::int32_t, "int32", kSigned)                        \
  X(Int64, std::int64_t, "int64", kSigned)                        \
  X(UInt8, std::uint8_t, "uint8", kUnsigned)                      \
  X(UInt16, std::uint16_t, "uint16", kUnsigned)                   \
  X(UInt32, std::uint32_t, "uint32", kUnsigned)                   \
  X(UInt64, std::uint64_t, "uint64", kUnsigned)                   \
  X(Float32, float, "float32", kFloat)                            \
  X(Float64, double, "float64", kFloat)                           \
  X(LongDouble, long_double, "longdouble", kFloat)                \
  X(Complex64, std::complex<float>, "complex64", kComplex)        \
  X(Complex128, std::complex<double>, "complex128", kComplex)     \
  X(CLongDouble, std::complex<long double>, "clongdouble", kComplex) \
  X(ShortIntPair, ShortInt, "short_int", kPair)                   \
  X(IntIntPair, IntInt, "twoint", kPair)                          \
  X(LongIntPair, LongInt, "long_int", kPair)                      \
  X(FloatIntPair, FloatInt, "float_int", kPair)                   \
  X(DoubleIntPair, DoubleInt, "double_int", kPair)                \
  X(LongDoubleIntPair, LongDoubleInt, "long_double_int", kPair)

// How many operands an op takes besides the target:
//   0: INC, NO_OP            (origin ignored)
//   1: SUM ... REPLACE, SWAP, MAXLOC, MINLOC (origin)
//   2: CSWAP_*, MSWAP        (origin = comperand or mask, origin2 = swap value)
// X(enumerator, name used in info keys and Python constants, dtype classes, operands)
#define ONESIDED_OPS(X)                                   \
  X(Sum, "sum", kNumeric, 1)                              \
  X(Prod, "prod", kNumeric, 1)                            \
  X(Max, "max", kReal, 1)                                 \
  X(Min, "min", kReal, 1)                                 \
  X(MaxLoc, "maxloc", kPair, 1)                           \
  X(MinLoc, "minloc", kPair, 1)                           \
  X(Band, "band", kInteger, 1)                            \
  X(Bor, "bor", kInteger, 1)                              \
  X(Bxor, "bxor", kInteger, 1)                            \
  X(Land, "land", kInteger | kLogical, 1)                 \
  X(Lor, "lor", kInteger | kLogical, 1)                   \
  X(Lxor, "lxor", kInteger | kLogical, 1)                 \
  X(Replace, "replace", kAll | kPair, 1)                  \
  X(NoOp, "no_op", kAll | kPair, 0)                       \
  X(Inc, "inc", kNumeric, 0)                              \
  X(CswapEq, "comp_swap_eq", kAll, 2)                     \
  X(CswapNe, "comp_swap_ne", kAll, 2)                     \
  X(CswapLt, "comp_swap_lt", kReal, 2)                    \
  X(CswapLe, "comp_swap_le", kReal, 2)                    \
  X(CswapGt, "comp_swap_gt", kReal, 2)                    \
  X(CswapGe, "comp_swap_ge", kReal, 2)                    \
  X(MaskSwap, "mask_swap", kInteger, 2)

enum class Dtype : std::uint8_t {
#define ONESIDED_X(e, T, name, cls) e,
  ONESIDED_DTYPES(ONESIDED_X)
#undef ONESIDED_X
};

enum class Op : std::uint8_t {
#define ONESIDED_X(e, name, classes, operands) e,
  ONESIDED_OPS(ONESIDED_X)
#undef ONESIDED_X
};

struct DtypeInfo {
  Dtype id;
  std::string_view name;
  std::size_t size;
  unsigned cls;
};

struct OpInfo {
  Op id;
  std::string_view name;
  unsigned classes;
  int operands;
};

inline constexpr DtypeInfo kDtypes[] = {
#define ONESIDED_X(e, T, name, cls) {Dtype::e, name, sizeof(T), cls},
    ONESIDED_DTYPES(ONESIDED_X)
#undef ONESIDED_X
};

inline constexpr OpInfo kOps[] = {
#define ONESIDED_X(e, name, classes, operands) {Op::e, name, classes, operands},
    ONESIDED_OPS(ONESIDED_X)
#undef ONESIDED_X
};

inline constexpr std::size_t kNumDtypes = std::size(kDtypes);
inline constexpr std::size_t kNumOps = std::size(kOps);

constexpr const DtypeInfo& dtype_info(Dtype d) { return kDtypes[static_cast<std::size_t>(d)]; }
constexpr const OpInfo& op_info(Op op) { return kOps[static_cast<std::size_t>(op)]; }

// Whether `op` has a meaning on elements of `d` (BAND on float64 has none).
constexpr bool op_applies(Op op, Dtype d) { return (op_info(op).classes & dtype_info(d).cls) != 0; }

// The calls that perform accumulate-style operations, as named in the
// accumulate_ops info key. Each admits a subset of the ops.
// X(enumerator, name)
#define ONESIDED_FUNCTIONS(X)             \
  X(Accumulate, "accumulate")             \
  X(GetAccumulate, "get_accumulate")      \
  X(FetchAndOp, "fetch_and_op")           \
  X(CompareAndSwap, "compare_and_swap")   \
  X(Rmw, "rmw")                           \
  X(Rmw2, "rmw2")

enum class Function : std::uint8_t {
#define ONESIDED_X(e, name) e,
  ONESIDED_FUNCTIONS(ONESIDED_X)
#undef ONESIDED_X
};

inline constexpr std::string_view kFunctionNames[] = {
#define ONESIDED_X(e, name) name,
    ONESIDED_FUNCTIONS(ONESIDED_X)
#undef ONESIDED_X
};
inline constexpr std::size_t kNumFunctions = std::size(kFunctionNames);
inline constexpr Function kFunctions[] = {
#define ONESIDED_X(e, name) Function::e,
    ONESIDED_FUNCTIONS(ONESIDED_X)
#undef ONESIDED_X
};

constexpr std::string_view function_name(Function f) { return kFunctionNames[static_cast<std::size_t>(f)]; }

// Which ops a function takes: MPI's accumulate family takes the reductions
// (and NO_OP when it fetches); compare_and_swap is CSWAP_EQ; the seed's Rmw
// takes the one-operand ops plus INC, Rmw2 the two-operand ones.
constexpr bool function_admits(Function f, Op op) {
  const int n = op_info(op).operands;
  switch (f) {
    case Function::Accumulate: return n == 1;
    case Function::GetAccumulate:
    case Function::FetchAndOp: return n == 1 || op == Op::NoOp;
    case Function::CompareAndSwap: return op == Op::CswapEq;
    // The seed's Rmw names its ops (RMW_*): no MAXLOC or MINLOC among them.
    case Function::Rmw: return (n == 1 && op != Op::MaxLoc && op != Op::MinLoc) || op == Op::Inc;
    case Function::Rmw2: return n == 2;
  }
  return false;
}

std::optional<Dtype> dtype_from_name(std::string_view name);
std::optional<Op> op_from_name(std::string_view name);

// Calls f(T{}) with a value of the C++ element type of `d`, so generic code
// can be written once for every dtype in the table.
template <class F>
decltype(auto) visit_dtype(Dtype d, F&& f) {
  switch (d) {
#define ONESIDED_X(e, T, name, cls) \
  case Dtype::e:                    \
    return f(T{});
    ONESIDED_DTYPES(ONESIDED_X)
#undef ONESIDED_X
  }
  __builtin_unreachable();
}

// The table's dtype whose element type is V (nullopt: none).
template <class V>
constexpr std::optional<Dtype> dtype_of_type() {
#define ONESIDED_X(e, T, name, cls) \
  if constexpr (std::is_same_v<V, T>) return Dtype::e;
  ONESIDED_DTYPES(ONESIDED_X)
#undef ONESIDED_X
  return std::nullopt;
}

// The value dtype of a pair dtype (float64 for double_int), for the Python
// side's numpy records and the pair kernels; nullopt for the basic dtypes.
inline std::optional<Dtype> pair_value(Dtype d) {
  return visit_dtype(d, [](auto tag) -> std::optional<Dtype> {
    if constexpr (requires { tag.index; })
      return dtype_of_type<decltype(tag.value)>();
    else
      return std::nullopt;
  });
}

// Where a pair's index sits, in bytes from the pair's start (0 for a basic dtype).
inline std::size_t pair_index_offset(Dtype d) {
  return visit_dtype(d, [](auto tag) -> std::size_t {
    using T = decltype(tag);
    if constexpr (requires { tag.index; })
      return offsetof(T, index);
    else
      return 0;
  });
}

}  // namespace onesided
