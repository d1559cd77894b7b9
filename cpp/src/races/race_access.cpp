#include "races/race_access.hpp"

namespace onesided::detail {

std::string describe_call(const RaceAccess& a) {
  const std::string bytes = std::to_string(a.hi - a.lo) + " bytes";
  switch (a.call) {
    case CallKind::Put: return "Put (" + bytes + ")";
    case CallKind::Get: return "Get (" + bytes + ")";
    case CallKind::Accumulate: break;
  }
  const std::string dtype(dtype_info(a.dtype).name);
  static const char* const kNames[] = {"Accumulate", "Get_accumulate", "Fetch_and_op", "Compare_and_swap", "Rmw", "Rmw2"};
  return std::string(kNames[static_cast<std::size_t>(a.function)]) + " (" + std::string(op_info(a.op).name) + ", " +
         dtype + ")";
}

std::string describe_epoch(EpochKind e) {
  switch (e) {
    case EpochKind::None: return "no epoch";
    case EpochKind::Fence: return "a fence epoch";
    case EpochKind::Pscw: return "a PSCW access epoch";
    case EpochKind::LockShared: return "a shared lock epoch";
    case EpochKind::LockExclusive: return "an exclusive lock epoch";
    case EpochKind::LockAll: return "a Lock_all epoch";
  }
  return "?";
}

}  // namespace onesided::detail
