// A window's info, read once at the edge: every key checked and turned
// into typed settings before any rank talks to another. The ranks then
// agree on them at creation (window/create.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "onesided/window.hpp"
#include "atomics/op_set.hpp"
#include "order/ordering.hpp"

namespace onesided::detail {

struct Config {
  std::string provider;        // info "provider"; empty: FI_PROVIDER or onesided's choice
  OpSet declared = OpSet::all();  // accumulate_ops (alias which_accumulate_ops)
  Ordering ordering;           // accumulate_ordering
  std::string software_only;   // non-empty: onesided_atomics=software, with the reason
  std::optional<std::uint64_t> nasty_seed;  // onesided_nasty or ONESIDED_NASTY
  // onesided_check or ONESIDED_CHECK (docs/checking.md): "" (off), "races"
  // (findings are warnings) or "races:error" (findings raise).
  std::string check;
  // onesided_shared_memory (alias onesided_fast_path) and the environment's
  // ONESIDED_SHARED_MEMORY (alias ONESIDED_FAST_PATH): false turns off every
  // use of memory shared between ranks on one host (the shared-memory path,
  // cross-memory attach, doorbells, lock words).
  bool shared_memory = true;
  bool alloc_shared_noncontig = false;
  // mpi_accumulate_granularity (MPI 4.1): the bytes of target memory the
  // software atomics apply under one hold of the target's lock, rounded up
  // to whole elements; 0 (the default): a whole message under one hold.
  std::uint64_t accumulate_granularity = 0;
  // onesided_notifications: notification counters per rank (notified RMA).
  std::size_t notifications = 0;
  static constexpr std::size_t kMaxNotifications = std::size_t{1} << 20;

  static Config parse(const Info& info);
  // The settings every rank must give alike, as one readable string.
  std::string agreed(Flavor flavor) const;
  // Whether this rank asks for a network provider (info or FI_PROVIDER).
  bool wants_network() const;
};

}  // namespace onesided::detail
