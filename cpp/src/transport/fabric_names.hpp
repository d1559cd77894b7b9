// libfabric's names for onesided's op x dtype table (types.hpp), for the
// one file that calls fi_* (fabric_transport.cpp).
#pragma once

#include <rdma/fi_atomic.h>

#include <optional>

#include "onesided/types.hpp"

namespace onesided::detail {

// libfabric's names for the table's ops and dtypes; nullopt where it has
// none. Switches, so a new table entry is a compile warning here.
inline std::optional<fi_op> fabric_op(Op op) {
  switch (op) {
    case Op::Sum: return FI_SUM;
    case Op::Prod: return FI_PROD;
    case Op::Max: return FI_MAX;
    case Op::Min: return FI_MIN;
    case Op::MaxLoc:  // libfabric has no value-and-index ops
    case Op::MinLoc: return std::nullopt;
    case Op::Band: return FI_BAND;
    case Op::Bor: return FI_BOR;
    case Op::Bxor: return FI_BXOR;
    case Op::Land: return FI_LAND;
    case Op::Lor: return FI_LOR;
    case Op::Lxor: return FI_LXOR;
    case Op::Replace: return FI_ATOMIC_WRITE;
    case Op::NoOp: return FI_ATOMIC_READ;
    case Op::Inc: return std::nullopt;
    case Op::CswapEq: return FI_CSWAP;
    case Op::CswapNe: return FI_CSWAP_NE;
    case Op::CswapLt: return FI_CSWAP_LT;
    case Op::CswapLe: return FI_CSWAP_LE;
    case Op::CswapGt: return FI_CSWAP_GT;
    case Op::CswapGe: return FI_CSWAP_GE;
    case Op::MaskSwap: return FI_MSWAP;
  }
  return std::nullopt;
}

inline std::optional<fi_datatype> fabric_datatype(Dtype d) {
  switch (d) {
    // numpy's bool is a byte holding 0 or 1, and so are the results of
    // the ops that apply to bool (logical ops, swaps).
    case Dtype::Bool: return FI_UINT8;
    case Dtype::Int8: return FI_INT8;
    case Dtype::Int16: return FI_INT16;
    case Dtype::Int32: return FI_INT32;
    case Dtype::Int64: return FI_INT64;
    case Dtype::UInt8: return FI_UINT8;
    case Dtype::UInt16: return FI_UINT16;
    case Dtype::UInt32: return FI_UINT32;
    case Dtype::UInt64: return FI_UINT64;
    case Dtype::Float32: return FI_FLOAT;
    case Dtype::Float64: return FI_DOUBLE;
    case Dtype::LongDouble: return FI_LONG_DOUBLE;
    case Dtype::Complex64: return FI_FLOAT_COMPLEX;
    case Dtype::Complex128: return FI_DOUBLE_COMPLEX;
    case Dtype::CLongDouble: return FI_LONG_DOUBLE_COMPLEX;
    // libfabric has no pair datatypes: their ops run in software.
    case Dtype::ShortIntPair:
    case Dtype::IntIntPair:
    case Dtype::LongIntPair:
    case Dtype::FloatIntPair:
    case Dtype::DoubleIntPair:
    case Dtype::LongDoubleIntPair: return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace onesided::detail
