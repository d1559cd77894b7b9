#include "window/config.hpp"

#include <charconv>
#include <cstdlib>
#include <string_view>

#include "order/nasty.hpp"
#include "onesided/error.hpp"

namespace onesided::detail {
namespace {

// MPI's standard window hints that change semantics (accumulate_ops,
// accumulate_ordering, alloc_shared_noncontig) or where onesided takes its
// locks (mpi_accumulate_granularity) are applied; the others
// (no_locks, same_size, same_disp_unit, other mpi_*) only promise what onesided
// does not rely on.
// onesided's own keys; onesided_fast_path is the old spelling of
// onesided_shared_memory, kept as an alias.
constexpr std::string_view kOwnKeys[] = {"provider", "onesided_atomics", "onesided_nasty",
                                         "onesided_shared_memory", "onesided_fast_path", "onesided_notifications",
                                         "onesided_check"};

// Unknown keys are ignored, as MPI does (another library's hints may share
// the info), except in onesided's own namespace, where a key onesided does
// not know is a typo that a silent ignore would hide.
void check_key(const std::string& key) {
  if (key.rfind("onesided_", 0) != 0) return;
  for (auto k : kOwnKeys)
    if (key == k) return;
  std::string known;
  for (auto k : kOwnKeys) known += (known.empty() ? "" : ", ") + std::string(k);
  raise(ErrorCategory::Argument, "unknown onesided info key '" + key + "' (onesided's keys: " + known + ")");
}

// An on/off switch: empty (not given) is on; anything but these six is an error.
bool on(const std::string& v, const char* name) {
  if (v.empty() || v == "on" || v == "true" || v == "1") return true;
  if (v == "off" || v == "false" || v == "0") return false;
  raise(ErrorCategory::Argument, std::string(name) + " must be on, off, true, false, 1 or 0, not '" + v + "'");
}

// A setting that has a new and an old name: both may be given if they agree.
std::string either(const Info& info, const char* key, const char* alias) {
  auto a = info.find(key), b = info.find(alias);
  if (a != info.end() && b != info.end() && a->second != b->second)
    raise(ErrorCategory::Argument, std::string("info keys ") + key + " and " + alias + " (its old name) disagree");
  return a != info.end() ? a->second : b != info.end() ? b->second : std::string();
}

// MPI 4.1's mpi_accumulate_granularity: a count of bytes, digits only (no
// sign, no spaces), at most 2^64 - 1.
std::uint64_t granularity(const std::string& v) {
  std::uint64_t n = 0;
  const auto [end, err] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || v[0] < '0' || v[0] > '9' || err != std::errc() || end != v.data() + v.size())
    raise(ErrorCategory::Argument,
          "mpi_accumulate_granularity must be a non-negative integer (a count of bytes, at most 2^64-1), not '" + v + "'");
  return n;
}

std::string env_either(const char* name, const char* alias) {
  const char* v = std::getenv(name);
  if (!v) v = std::getenv(alias);
  return v ? v : "";
}

// A count written in decimal digits, at most `max`: no sign, no spaces, no
// other base (an info value is text; "1e3" or " 4" is a typo, not a number).
std::size_t count_value(const std::string& v, const char* name, std::size_t max) {
  const bool digits = !v.empty() && v.size() <= 8 && v.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || std::stoull(v) > max)
    raise(ErrorCategory::Argument, std::string(name) + " must be a whole number from 0 to " + std::to_string(max) +
                                       ", not '" + v + "'");
  return static_cast<std::size_t>(std::stoull(v));
}

// onesided_check, else ONESIDED_CHECK: off (empty, "off", "0"), "races"
// or "races:error".
std::string check_mode(const Info& info) {
  const char* env = std::getenv("ONESIDED_CHECK");
  std::string v = info.count("onesided_check") ? info.at("onesided_check") : env ? env : "";
  if (v == "off" || v == "0" || v == "false") v.clear();
  if (!v.empty() && v != "races" && v != "races:error")
    raise(ErrorCategory::Argument, "onesided_check (or ONESIDED_CHECK) must be races, races:error or off, not '" + v + "'");
  return v;
}

}  // namespace

Config Config::parse(const Info& info) {
  for (const auto& [key, value] : info) check_key(key);
  auto value = [&](const char* key) { return info.count(key) ? info.at(key) : std::string(); };
  Config c;
  c.provider = value("provider");
  // MPICH's own key, in MPICH's grammar (op_set.hpp); with both keys a
  // call must be in both declarations.
  c.declared = OpSet::parse(value("accumulate_ops"));
  if (info.count("which_accumulate_ops")) c.declared = c.declared & OpSet::parse_mpich(info.at("which_accumulate_ops"));
  if (info.count("accumulate_ordering")) c.ordering = Ordering::parse(info.at("accumulate_ordering"));
  const std::string atomics = value("onesided_atomics");
  if (atomics == "software")
    c.software_only = "software requested (info onesided_atomics=software)";
  else if (!atomics.empty() && atomics != "auto")
    raise(ErrorCategory::Argument, "onesided_atomics must be auto or software, not '" + atomics + "'");
  const std::string nasty = value("onesided_nasty");
  c.nasty_seed = NastyQueue::seed_from(info.count("onesided_nasty") ? &nasty : nullptr);
  c.check = check_mode(info);
  c.shared_memory = on(either(info, "onesided_shared_memory", "onesided_fast_path"), "info onesided_shared_memory") &&
                    on(env_either("ONESIDED_SHARED_MEMORY", "ONESIDED_FAST_PATH"), "ONESIDED_SHARED_MEMORY");
  const std::string noncontig = info.count("alloc_shared_noncontig") ? info.at("alloc_shared_noncontig") : "false";
  if (noncontig != "true" && noncontig != "false")
    raise(ErrorCategory::Argument, "alloc_shared_noncontig must be true or false, not '" + noncontig + "'");
  c.alloc_shared_noncontig = noncontig == "true";
  if (info.count("mpi_accumulate_granularity")) c.accumulate_granularity = granularity(info.at("mpi_accumulate_granularity"));
  if (info.count("onesided_notifications"))
    c.notifications = count_value(info.at("onesided_notifications"), "info onesided_notifications", kMaxNotifications);
  return c;
}

std::string Config::agreed(Flavor flavor) const {
  static const char* const kFlavors[] = {"?", "create", "allocate", "dynamic", "shared"};
  std::string s = std::string("flavor=") + kFlavors[static_cast<int>(flavor)] + " provider='" + provider +
                  "' accumulate_ops=" + declared.str() + " accumulate_ordering=" + ordering.str() +
                  " onesided_atomics=" + (software_only.empty() ? "auto" : "software") +
                  " mpi_accumulate_granularity=" + std::to_string(accumulate_granularity) +
                  " onesided_notifications=" + std::to_string(notifications) +
                  " onesided_check=" + (check.empty() ? "off" : check);
  if (flavor == Flavor::Shared) s += std::string(" alloc_shared_noncontig=") + (alloc_shared_noncontig ? "true" : "false");
  return s;
}

bool Config::wants_network() const {
  const char* env = std::getenv("FI_PROVIDER");
  const std::string p = provider.empty() && env ? env : provider;
  return !p.empty() && p != "shm";
}

}  // namespace onesided::detail
