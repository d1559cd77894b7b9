// Sizes and offsets computed with overflow checks: a size no process could
// hold is an Argument error naming what overflowed, never a wrapped value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "onesided/error.hpp"

namespace onesided::detail {

inline std::size_t checked_mul(std::size_t a, std::size_t b, const char* what) {
  std::size_t r;
  if (__builtin_mul_overflow(a, b, &r))
    raise(ErrorCategory::Argument, std::string(what) + " overflows: " + std::to_string(a) + " x " + std::to_string(b));
  return r;
}

inline std::size_t checked_add(std::size_t a, std::size_t b, const char* what) {
  std::size_t r;
  if (__builtin_add_overflow(a, b, &r))
    raise(ErrorCategory::Argument, std::string(what) + " overflows: " + std::to_string(a) + " + " + std::to_string(b));
  return r;
}

// `v` rounded up to a multiple of `unit` (a power of two).
inline std::size_t checked_round_up(std::size_t v, std::size_t unit, const char* what) {
  return checked_add(v, unit - 1, what) & ~(unit - 1);
}

// The largest window a process can map: what mmap and off_t can express.
inline constexpr std::size_t kMaxWindowBytes = static_cast<std::size_t>(INT64_MAX) / 2;

}  // namespace onesided::detail
