#include "order/order_tracker.hpp"

#include <algorithm>
#include <array>

namespace onesided::detail {

bool OrderRule::kept(char pair, std::uint64_t bytes) const {
  switch (pair) {
    case 'r': return provided_.rar;  // read after read: nothing is placed
    case 'a': return provided_.raw && bytes <= provided_.raw_size;
    case 'w': return provided_.war && bytes <= provided_.war_size;
    default: return provided_.waw && bytes <= provided_.waw_size;
  }
}

namespace {
struct Pair {
  char pair;
  bool present;
};
// The pair types two ops form that the window requires ordered.
std::array<Pair, 4> required_pairs(const Ordering& required, const Access& earlier, const Access& later) {
  if (earlier.hi <= later.lo || later.hi <= earlier.lo) return {};  // disjoint
  return {{{'r', earlier.reads && later.reads && required.rar},
           {'a', earlier.writes && later.reads && required.raw},
           {'w', earlier.reads && later.writes && required.war},
           {'W', earlier.writes && later.writes && required.waw}}};
}
}  // namespace

bool OrderRule::requires_order(const Access& earlier, const Access& later) const {
  for (const auto& p : required_pairs(required_, earlier, later))
    if (p.present) return true;
  return false;
}

bool OrderRule::must_wait(const Access& earlier, const Access& later) const {
  const auto pairs = required_pairs(required_, earlier, later);
  if (!requires_order(earlier, later)) return false;
  if (earlier.channel != later.channel) return true;  // two paths: nothing orders them
  if (earlier.channel == Channel::Messages) return false;  // applied in send order
  const std::uint64_t bytes = std::max(earlier.bytes(), later.bytes());
  for (const auto& p : pairs)
    if (p.present && !kept(p.pair, bytes)) return true;
  return false;
}

bool OrderRule::native_always_ordered() const {
  return (!required_.rar || kept('r', UINT64_MAX)) && (!required_.raw || kept('a', UINT64_MAX)) &&
         (!required_.war || kept('w', UINT64_MAX)) && (!required_.waw || kept('W', UINT64_MAX));
}

std::string OrderRule::describe(bool any_native, bool any_software) const {
  if (required_ == Ordering{false, false, false, false}) return "none required";
  std::string kept_list, waited;
  const struct {
    char pair;
    bool on;
    const char* name;
  } all[] = {{'r', required_.rar, "rar"}, {'a', required_.raw, "raw"}, {'w', required_.war, "war"},
             {'W', required_.waw, "waw"}};
  for (const auto& p : all) {
    if (!p.on) continue;
    std::string& into = kept(p.pair, UINT64_MAX) ? kept_list : waited;
    into += (into.empty() ? "" : ",") + std::string(p.name);
  }
  std::string out;
  if (any_software) out = "software atomics: all orders kept by in-order messages";
  if (any_native) {
    if (!out.empty()) out += "; ";
    out += "native atomics: ";
    out += kept_list.empty() ? "provider keeps none for every size"
                             : "provider keeps " + kept_list + " for every size";
    out += waited.empty() ? "" : "; onesided keeps " + waited + " by waiting for overlapping earlier ops";
  }
  return out;
}

}  // namespace onesided::detail
