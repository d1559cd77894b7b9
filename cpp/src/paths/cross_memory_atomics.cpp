// Cross-memory atomics; the invariants are in cross_memory_atomics.hpp.
#include "paths/cross_memory_atomics.hpp"

#include <sys/types.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "atomics/kernels.hpp"
#include "memory/cross_memory.hpp"
#include "onesided/interrupt.hpp"

namespace onesided::detail {
namespace {

// Holds one target's atomic lock for a scope; released on the way out of
// a failed copy too (a target that died raises from the copy).
class Held {
 public:
  Held(SharedLockWord& word, const WindowState& s) : lock_(word) {
    // Not interrupted: an abandoned ticket would never be given back, and
    // every holder keeps this lock for one operation, never for user code.
    InterruptsDeferred uninterrupted;
    lock_.lock(true, [&s] { s.check_peers(); });
  }
  ~Held() { lock_.unlock(true); }
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;

 private:
  SharedLock lock_;
};

}  // namespace

const char* CrossMemoryAtomics::reason() {
  return "cross-memory path: the calling rank reads, applies and writes back the target's elements "
         "(process_vm_readv/writev) under the target's atomic lock in shared memory; no target progress";
}

void CrossMemoryAtomics::apply(const Where& w, const AtomicCall& c) {
  const std::size_t esize = dtype_info(c.dtype).size;
  const std::uint64_t g = s_.accumulate_granularity;
  // MPI 4.1: a granularity that is not a multiple of the element size
  // counts as the next multiple (and never less than one element).
  const std::uint64_t per_hold = g == 0 ? c.count : std::max<std::uint64_t>(1, g / esize + (g % esize != 0));
  const auto* origin = static_cast<const std::byte*>(c.origin);
  const auto* origin2 = static_cast<const std::byte*>(c.origin2);
  auto* result = static_cast<std::byte*>(c.result);
  const pid_t pid = static_cast<pid_t>(s_.peers[w.target].pid);
  const std::uint64_t remote = s_.peers[w.target].base + w.at;
  // The target's elements travel through a copy here: on the stack for
  // the usual one-element call, on the heap for long ones.
  std::array<std::byte, 64> small;
  std::vector<std::byte> large;
  for (std::size_t first = 0; first < c.count;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(per_hold, c.count - first));
    const std::size_t at = first * esize, bytes = n * esize;
    const std::byte* o1 = origin ? origin + at : nullptr;
    const std::byte* o2 = origin2 ? origin2 + at : nullptr;
    std::byte* res = result ? result + at : nullptr;
    Held held(words_[w.target], s_);
    if (w.local) {
      kernels::apply(c.op, c.dtype, w.local + at, o1, o2, res, n);
    } else {
      if (bytes > small.size() && large.size() < bytes) large.resize(bytes);
      std::byte* copy = bytes > small.size() ? large.data() : small.data();
      cma::read(pid, copy, remote + at, bytes);
      kernels::apply(c.op, c.dtype, copy, o1, o2, res, n);
      // A fetch that left the elements as they were (NO_OP, a compare
      // that failed) writes nothing back: the old values are in `res`.
      if (c.op != Op::NoOp && !(res && std::memcmp(copy, res, bytes) == 0)) cma::write(pid, remote + at, copy, bytes);
    }
    first += n;
  }
}

}  // namespace onesided::detail
