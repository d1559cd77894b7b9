// How one rank names another's memory: the peer's fabric address and the
// provider's handle for a registered region. Plain values, here below both
// the transport (which hands them out) and memory (whose region tables
// carry them between ranks), so neither includes the other for them.
#pragma once

#include <cstdint>

namespace onesided::detail {

using PeerAddr = std::uint64_t;

// What a target publishes about a registered region so origins can address it.
struct RemoteRegion {
  std::uint64_t addr = 0;  // provider address of byte 0 (virtual address or 0)
  std::uint64_t key = 0;
};

}  // namespace onesided::detail
