// A fast 64-bit checksum of a buffer, for the race checker's watch on
// origin buffers (paths/checking_path.cpp): not cryptographic, only a
// change detector. Two independent lanes of multiply and xor-shift over
// 8-byte words keep it at several GB/s, so checking a Put's origin costs
// about as much as copying it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace onesided::detail {

inline std::uint64_t checksum(const void* data, std::size_t n) {
  constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ull;
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t a = n ^ 0x243F6A8885A308D3ull, b = 0x13198A2E03707344ull;
  auto mix = [](std::uint64_t h, std::uint64_t w) {
    h = (h ^ w) * kMul;
    return h ^ (h >> 29);
  };
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    std::uint64_t w0, w1;
    std::memcpy(&w0, p + i, 8);
    std::memcpy(&w1, p + i + 8, 8);
    a = mix(a, w0);
    b = mix(b, w1);
  }
  for (; i < n; ++i) a = mix(a, p[i]);
  return mix(a, b);
}

}  // namespace onesided::detail
