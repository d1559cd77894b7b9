// The messages onesided exchanges over Transport::send, beside plain RMA:
// software atomics executed at the target, and the passive-target lock
// protocol. A message is a Header followed by its payload.
#pragma once

#include <cstdint>

#include "onesided/types.hpp"

namespace onesided::detail {

enum class MsgKind : std::uint8_t {
  Atomic,       // origin -> target: apply op; payload = operands
  AtomicDone,   // target -> origin: payload = old values when Fetch is set
  Lock,         // origin -> target: request the window lock
  LockGranted,  // target -> origin
  Unlock,       // origin -> target: release (earlier ops are already complete)
  UnlockDone,   // target -> origin
  Post,         // target -> origin: the target's exposure epoch is open (PSCW)
  Complete,     // origin -> target: the origin's ops in its access epoch are complete
  Regions,      // origin -> target: send me your dynamic window's attached regions
  RegionsReply, // target -> origin: payload = RegionTable::bytes()
  Notify,       // origin -> target: add one to notification counter `count` (the
                // operations it covers are complete at the target: in_flight_ops.hpp)
  NotifyDone,   // target -> origin: counted (token echoed)
  Races,        // origin -> target: accesses for the race checker (races/race_log.hpp)
  RacesDone,    // target -> origin: the accesses are in the target's view
  Scatter,      // origin -> target: write these pieces (paths/scattered_puts.hpp)
  ScatterDone,  // target -> origin: the pieces are written (token echoed)
  Gather,       // origin -> target: send me these pieces (paths/gathered_gets.hpp)
  GatherDone,   // target -> origin: payload = the pieces' bytes in order
  AtomicRuns,   // origin -> target: apply op to these pieces (paths/software_atomic_runs.cpp);
                // answered with AtomicDone, the old values in piece order when Fetch is set
};

enum MsgFlags : std::uint8_t {
  kFetch = 1u << 0,      // Atomic: reply with the old values
  kExclusive = 1u << 1,  // Lock: exclusive rather than shared
  kFailed = 1u << 2,     // *Done: the target rejected the request (payload = reason)
};

struct Header {
  MsgKind kind;
  Op op;
  Dtype dtype;
  std::uint8_t flags;
  std::uint32_t window;  // the receiver's window id
  std::uint32_t origin;  // the sender's rank in the window's group
  std::uint32_t count;   // elements (Atomic); the counter's index (Notify); runs (Scatter, Gather, AtomicRuns)
  std::uint64_t offset;  // byte offset in the target's window; on a dynamic window, the address (Atomic)
  std::uint64_t token;   // sender's cookie, echoed in the reply
};

// The one way a header is made: addressed to the receiver's window, from
// the sender's rank, with the cookie the reply echoes. Atomic requests fill
// in op, dtype, count and offset afterwards.
inline Header make_header(MsgKind kind, std::uint32_t window, int origin, std::uint64_t token,
                          std::uint8_t flags = 0) {
  Header h{};
  h.kind = kind;
  h.flags = flags;
  h.window = window;
  h.origin = static_cast<std::uint32_t>(origin);
  h.token = token;
  return h;
}

inline constexpr std::size_t kNumMsgKinds = static_cast<std::size_t>(MsgKind::GatherDone) + 1;

}  // namespace onesided::detail
