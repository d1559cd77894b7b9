// The control page the two processes share (mapped before fork): the origin
// sets the phase, the target behaves as the phase asks (sleeps, spins on the
// CPU floor's line, or polls a raw libfabric CQ) and acknowledges it.
#pragma once

#include <atomic>
#include <cstdint>

#include "raw_fabric.hpp"

namespace onesided_bench {

enum Phase : std::uint32_t { kIdle, kSpin, kRawShm, kRawTcp, kDone };

struct Control {
  alignas(64) std::atomic<std::uint32_t> phase{kIdle};  // set by the origin (a futex word)
  alignas(64) std::atomic<std::uint32_t> ack{kIdle};    // the phase the target has entered
  alignas(64) std::atomic<std::int64_t> floor[8]{};     // the CPU floor's cells: one cache line
};

// Origin: switch the target to `p` and wait until it got there.
void set_phase(Control& c, Phase p);

// Target: behave as the origin's phase asks until kDone.
void target_loop(Control& c, RawFabric* raw_shm, RawFabric* raw_tcp);

}  // namespace onesided_bench
