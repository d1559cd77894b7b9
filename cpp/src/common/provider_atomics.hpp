// What a provider offers for native atomics, as plain values: the shapes
// onesided posts and the orders the provider keeps between them. Here below
// the transport (which reports them) and atomics and order (which decide
// from them), so deciding never needs the transport's interface.
#pragma once

#include <cstddef>
#include <cstdint>

namespace onesided::detail {

// The shapes of a native atomic onesided uses (libfabric's fi_fetch_atomic
// and fi_compare_atomic). Non-fetching atomics are not used: a fetch
// completes only once the target has applied the op, on every provider.
enum class AtomicKind : std::uint8_t { Fetch, Compare };
inline constexpr std::size_t kNumAtomicKinds = 2;

// Which orders the provider keeps between atomics from one origin to one
// target (FI_ORDER_ATOMIC_*), and up to which size the data placement
// follows that order (fi_ep_attr max_order_{raw,war,waw}_size; 0: for no
// size). Read-after-read has no data to place and no size limit.
struct AtomicOrder {
  bool rar = false, raw = false, war = false, waw = false;
  std::uint64_t raw_size = UINT64_MAX, war_size = UINT64_MAX, waw_size = UINT64_MAX;
};

}  // namespace onesided::detail
