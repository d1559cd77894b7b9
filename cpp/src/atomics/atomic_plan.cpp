#include "atomics/atomic_plan.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <utility>

#include "onesided/error.hpp"

namespace onesided::detail {

NativeTable NativeTable::probe(Transport& transport) {
  NativeTable t;
  for (std::size_t k = 0; k < kNumAtomicKinds; ++k)
    for (const auto& o : kOps)
      for (const auto& d : kDtypes) {
        const auto kind = static_cast<AtomicKind>(k);
        if (op_applies(o.id, d.id))
          t.counts_[index(kind, o.id, d.id)] = static_cast<std::uint32_t>(
              std::min<std::size_t>(transport.native_count(kind, o.id, d.id), UINT32_MAX));
      }
  return t;
}

void NativeTable::meet(const NativeTable& other) {
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] = std::min(counts_[i], other.counts_[i]);
}

// Runs of equal counts, each (length, count) as two LEB128 varints: the
// table is runs of zeros (ops a dtype does not take) between runs of one
// count, so its 3.6 KiB travel in about 600 bytes, and a window's exchange
// fits one round of its allgather (comm/_polled.py's slot).
namespace {
void put_varint(std::string& out, std::uint32_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
std::uint32_t get_varint(std::string_view bytes, std::size_t& at) {
  std::uint32_t v = 0;
  for (int shift = 0; shift < 35; shift += 7) {
    if (at >= bytes.size()) raise(ErrorCategory::Internal, "bad native-atomics table");
    const auto b = static_cast<std::uint8_t>(bytes[at++]);
    v |= static_cast<std::uint32_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  raise(ErrorCategory::Internal, "bad native-atomics table");
}
}  // namespace

std::string NativeTable::bytes() const {
  std::string out;
  for (std::size_t i = 0; i < counts_.size();) {
    std::size_t j = i;
    while (j < counts_.size() && counts_[j] == counts_[i]) ++j;
    put_varint(out, static_cast<std::uint32_t>(j - i));
    put_varint(out, counts_[i]);
    i = j;
  }
  return out;
}

NativeTable NativeTable::from_bytes(std::string_view bytes) {
  NativeTable t;
  std::size_t filled = 0, at = 0;
  while (at < bytes.size()) {
    const std::uint32_t run = get_varint(bytes, at), count = get_varint(bytes, at);
    if (run == 0 || run > t.counts_.size() - filled) raise(ErrorCategory::Internal, "bad native-atomics table");
    std::fill_n(t.counts_.begin() + static_cast<std::ptrdiff_t>(filled), run, count);
    filled += run;
  }
  if (filled != t.counts_.size()) raise(ErrorCategory::Internal, "bad native-atomics table");
  return t;
}

AtomicKind AtomicPlan::kind_of(Function f, Op op) {
  switch (f) {
    // Accumulate fetches too, into scratch (see AtomicKind). Non-fetching
    // atomics with FI_DELIVERY_COMPLETE also corrupted memory on libfabric
    // 1.17's shm once their buffers had been freed.
    case Function::Accumulate:
    case Function::GetAccumulate:
    case Function::FetchAndOp:
    case Function::Rmw: return AtomicKind::Fetch;
    case Function::CompareAndSwap:
    case Function::Rmw2: return AtomicKind::Compare;
  }
  (void)op;
  return AtomicKind::Fetch;
}

namespace {

// What a plan is decided from.
struct PlanInputs {
  OpSet declared;
  NativeTable local, everywhere;
  std::string provider, unavailable;
  bool operator==(const PlanInputs&) const = default;
};

}  // namespace

AtomicPlan::AtomicPlan(const OpSet& declared, const NativeTable& local, const NativeTable& everywhere,
                       const std::string& provider, const std::string& unavailable)
    : everywhere_(everywhere) {
  // A process makes its windows with the same settings on the same
  // provider, so the last plan's paths usually serve again: deciding them
  // (some 550 checks and a reason string per dtype) was a fifth of a later
  // Create_dynamic's own work (callgrind, one rank).
  static std::mutex mutex;
  static std::optional<std::pair<PlanInputs, std::array<AtomicPath, kNumDtypes>>> last;
  PlanInputs inputs{declared, local, everywhere, provider, unavailable};
  {
    std::lock_guard lock(mutex);
    if (last && last->first == inputs) {
      paths_ = last->second;
      return;
    }
  }
  decide(declared, local, everywhere, provider, unavailable);
  std::lock_guard lock(mutex);
  last.emplace(std::move(inputs), paths_);
}

void AtomicPlan::decide(const OpSet& declared, const NativeTable& local, const NativeTable& everywhere,
                        const std::string& provider, const std::string& unavailable) {
  for (const auto& d : kDtypes) {
    AtomicPath& p = paths_[static_cast<std::size_t>(d.id)];
    const std::string dname(d.name);
    if (!unavailable.empty()) {
      p = {false, unavailable};
      continue;
    }
    bool any = false;
    std::string gap;
    for (auto f : kFunctions) {
      for (const auto& o : kOps) {
        if (!declared.contains(f, o.id) || !op_applies(o.id, d.id)) continue;
        any = true;
        const auto kind = kind_of(f, o.id);
        const Op nop = native_op(o.id);
        if (everywhere.count(kind, nop, d.id) > 0) continue;
        gap = "provider " + provider + " has no native " + std::string(function_name(f)) + ":" +
              std::string(o.name) + " for " + dname +
              (local.count(kind, nop, d.id) > 0 ? " at every rank" : "");
        break;
      }
      if (!gap.empty()) break;
    }
    if (!any)
      p = {false, "no declared op applies to " + dname};
    else if (!gap.empty())
      p = {false, gap};
    else
      p = {true, "every declared op on " + dname + " is a native " + provider + " atomic at every rank"};
  }
}


}  // namespace onesided::detail
