// One remote access as the race checker sees it (races/race_log.hpp): who
// touched which bytes of which target, how, in which kind of epoch, from
// which source line; and the rule that says when two of them conflict.
//
// The rule (docs/semantics.md, docs/checking.md): two accesses to
// overlapping bytes of one target conflict when at least one of them
// writes, unless both are accumulate-style calls on the same dtype, which
// are atomic together whatever their ops. A Get_accumulate or Fetch_and_op
// with NO_OP is an atomic read. Whether the two are concurrent (nothing
// orders them) is the caller's question, not this file's.
#pragma once

#include <cstdint>
#include <string>

#include "onesided/types.hpp"

namespace onesided::detail {

enum class AccessKind : std::uint8_t { Read, Write, AtomicRead, AtomicWrite };

// The synchronisation an access was issued under; decides who can order it.
enum class EpochKind : std::uint8_t { None, Fence, Pscw, LockShared, LockExclusive, LockAll };

// Put and Get, then the accumulate family in Function's order.
enum class CallKind : std::uint8_t { Put, Get, Accumulate };

struct RaceAccess {
  std::uint64_t lo = 0, hi = 0;  // bytes [lo, hi) in the target's address space (Where::at)
  std::uint64_t issued = 0;      // steady clock at the call, ns (shared-lock epochs only)
  std::uint64_t completed = 0;   // steady clock when a flush or Unlock completed it, ns
  std::int32_t origin = 0;
  std::int32_t target = 0;
  std::uint32_t site = 0;        // the origin's call-site id (races/call_sites.hpp)
  // Nonzero while the access is a read with a Request that has not been
  // seen complete: the origin's id for it (RaceLog::record), so its Wait
  // can complete this access and no other. Zero once flushed or waited.
  std::uint32_t request = 0;
  AccessKind kind = AccessKind::Read;
  CallKind call = CallKind::Put;
  Function function = Function::Accumulate;  // when call is Accumulate
  Dtype dtype{};
  Op op{};
  EpochKind epoch = EpochKind::None;

  bool writes() const { return kind == AccessKind::Write || kind == AccessKind::AtomicWrite; }
  bool atomic() const { return kind == AccessKind::AtomicRead || kind == AccessKind::AtomicWrite; }
};

inline bool conflict(const RaceAccess& a, const RaceAccess& b) {
  if (!a.writes() && !b.writes()) return false;
  return !(a.atomic() && b.atomic() && a.dtype == b.dtype);
}

// "Put (4 bytes)", "Accumulate (sum, float64)": the call as a reader knows it.
std::string describe_call(const RaceAccess& a);
std::string describe_epoch(EpochKind e);

}  // namespace onesided::detail
