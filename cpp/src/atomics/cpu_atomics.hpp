// Accumulate-style ops as the CPU's own atomic instructions on memory that
// every rank maps (the shared-memory path). Elements of 1, 2, 4 or 8
// bytes, naturally aligned, use lock-free atomics (fetch_add, exchange, or
// a compare-exchange loop over the element's bits); other elements take one
// of a fixed set of spin locks (stripes) that live in the shared memory
// itself, chosen by the element's offset in it, so every process picks the
// same lock. All of it is sequentially consistent, which also keeps every
// accumulate_ordering.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include <span>

#include "onesided/types.hpp"

namespace onesided::detail::cpu {

inline constexpr std::size_t kStripes = 1024;
struct Stripes {
  std::uint32_t word[kStripes];  // 0 free, 1 held; used through std::atomic_ref
};

// Whether every element of `d` at an address aligned to its size is
// updated lock-free.
bool lock_free(Dtype d);

// For each element: result[i] (if not null) = target[i]; then target[i] =
// op(target[i], origin[i], origin2[i]), atomically per element.
// `target_offset` is the byte offset of `target` in the shared mapping that
// holds `stripes` (so every process derives the same stripe).
void apply(Op op, Dtype d, std::byte* target, std::uint64_t target_offset, const void* origin,
           const void* origin2, void* result, std::size_t count, Stripes& stripes);
// One chunk of a strided call: its elements' byte offsets from the
// origin, the result and the target given to apply_chunks.
struct Chunk {
  std::int64_t origin, result, target;
};
// The same as apply() for each of `chunks` (`bytes` each, a multiple of
// the element size; a null origin or result is not read or written), with
// one dispatch on the dtype for all of them. One-operand and no-operand
// ops only (a strided call has no origin2).
void apply_chunks(Op op, Dtype d, std::byte* target, std::uint64_t target_offset, const std::byte* origin,
                  std::byte* result, std::span<const Chunk> chunks, std::size_t bytes, Stripes& stripes);

}  // namespace onesided::detail::cpu
