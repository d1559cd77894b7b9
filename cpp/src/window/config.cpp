#include "window/config.hpp"

#include <cstdlib>
#include <string_view>

#include "order/nasty.hpp"
#include "onesided/error.hpp"

namespace onesided::detail {
namespace {

// MPI's standard window hints are accepted: the ones that change semantics
// (accumulate_ops, accumulate_ordering, alloc_shared_noncontig) are applied,
// the others only promise what onesided does not rely on.
// Anything else is most likely a typo, which a silent ignore would hide.
constexpr std::string_view kStandardKeys[] = {
    "no_locks", "accumulate_ordering", "accumulate_ops", "same_size", "same_disp_unit",
    "alloc_shared_noncontig", "mpi_accumulate_granularity", "which_accumulate_ops"};
// onesided's own keys; onesided_fast_path is the old spelling of
// onesided_shared_memory, kept as an alias.
constexpr std::string_view kOwnKeys[] = {"provider", "onesided_atomics", "onesided_nasty",
                                         "onesided_shared_memory", "onesided_fast_path"};

void check_key(const std::string& key) {
  if (key.rfind("mpi_", 0) == 0) return;
  for (auto k : kOwnKeys)
    if (key == k) return;
  for (auto k : kStandardKeys)
    if (key == k) return;
  std::string known;
  for (auto k : kOwnKeys) known += (known.empty() ? "" : ", ") + std::string(k);
  for (auto k : kStandardKeys) known += ", " + std::string(k);
  raise(ErrorCategory::Argument, "unknown window info key '" + key + "' (known: " + known + ")");
}

bool off(const std::string& v) { return v == "off" || v == "false" || v == "0"; }

// A setting that has a new and an old name: both may be given if they agree.
std::string either(const Info& info, const char* key, const char* alias) {
  auto a = info.find(key), b = info.find(alias);
  if (a != info.end() && b != info.end() && a->second != b->second)
    raise(ErrorCategory::Argument, std::string("info keys ") + key + " and " + alias + " (its old name) disagree");
  return a != info.end() ? a->second : b != info.end() ? b->second : std::string();
}

std::string env_either(const char* name, const char* alias) {
  const char* v = std::getenv(name);
  if (!v) v = std::getenv(alias);
  return v ? v : "";
}

}  // namespace

Config Config::parse(const Info& info) {
  for (const auto& [key, value] : info) check_key(key);
  auto value = [&](const char* key) { return info.count(key) ? info.at(key) : std::string(); };
  Config c;
  c.provider = value("provider");
  // MPICH spells the op list which_accumulate_ops; both mean the same.
  const std::string ops = value("accumulate_ops"), which = value("which_accumulate_ops");
  if (!ops.empty() && !which.empty() && ops != which)
    raise(ErrorCategory::Argument, "accumulate_ops and which_accumulate_ops disagree");
  c.declared = OpSet::parse(ops.empty() ? which : ops);
  if (info.count("accumulate_ordering")) c.ordering = Ordering::parse(info.at("accumulate_ordering"));
  const std::string atomics = value("onesided_atomics");
  if (atomics == "software")
    c.software_only = "software requested (info onesided_atomics=software)";
  else if (!atomics.empty() && atomics != "auto")
    raise(ErrorCategory::Argument, "onesided_atomics must be auto or software, not '" + atomics + "'");
  const std::string nasty = value("onesided_nasty");
  c.nasty_seed = NastyQueue::seed_from(info.count("onesided_nasty") ? &nasty : nullptr);
  c.shared_memory = !off(either(info, "onesided_shared_memory", "onesided_fast_path")) &&
                    !off(env_either("ONESIDED_SHARED_MEMORY", "ONESIDED_FAST_PATH"));
  const std::string noncontig = info.count("alloc_shared_noncontig") ? info.at("alloc_shared_noncontig") : "false";
  if (noncontig != "true" && noncontig != "false")
    raise(ErrorCategory::Argument, "alloc_shared_noncontig must be true or false, not '" + noncontig + "'");
  c.alloc_shared_noncontig = noncontig == "true";
  return c;
}

std::string Config::agreed() const { return declared.str() + "|" + ordering.str() + "|" + software_only; }

bool Config::wants_network() const {
  const char* env = std::getenv("FI_PROVIDER");
  const std::string p = provider.empty() && env ? env : provider;
  return !p.empty() && p != "shm";
}

}  // namespace onesided::detail
