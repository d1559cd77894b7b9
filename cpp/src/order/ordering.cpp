#include "order/ordering.hpp"

#include "common/info_text.hpp"
#include "onesided/error.hpp"

namespace onesided::detail {

Ordering Ordering::parse(std::string_view value) {
  Ordering o{false, false, false, false};
  const auto v = trim(value);
  if (v == "none") return o;
  if (v.empty()) raise(ErrorCategory::Argument, "accumulate_ordering is empty (use \"none\" or rar,raw,war,waw)");
  for (auto item : split(v, ',')) {
    item = trim(item);
    if (item == "rar") o.rar = true;
    else if (item == "raw") o.raw = true;
    else if (item == "war") o.war = true;
    else if (item == "waw") o.waw = true;
    else
      raise(ErrorCategory::Argument, "accumulate_ordering: unknown order '" + std::string(item) +
                                         "' (expected \"none\" or a comma list of rar, raw, war, waw)");
  }
  return o;
}

std::string Ordering::str() const {
  std::string out;
  for (auto [on, name] : {std::pair{rar, "rar"}, {raw, "raw"}, {war, "war"}, {waw, "waw"}})
    if (on) out += (out.empty() ? "" : ",") + std::string(name);
  return out.empty() ? "none" : out;
}

}  // namespace onesided::detail
