#include "atomics/atomic_plan.hpp"

#include <algorithm>
#include <cstring>

#include "onesided/error.hpp"

namespace onesided::detail {
namespace {

}  // namespace

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

std::string NativeTable::bytes() const {
  return std::string(reinterpret_cast<const char*>(counts_.data()), sizeof counts_);
}

NativeTable NativeTable::from_bytes(std::string_view bytes) {
  NativeTable t;
  if (bytes.size() != sizeof t.counts_) raise(ErrorCategory::Internal, "bad native-atomics table");
  std::memcpy(t.counts_.data(), bytes.data(), sizeof t.counts_);
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

AtomicPlan::AtomicPlan(const OpSet& declared, const NativeTable& local, const NativeTable& everywhere,
                       const std::string& provider, const std::string& unavailable)
    : everywhere_(everywhere) {
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
