#include "onesided/types.hpp"

namespace onesided {

std::optional<Dtype> dtype_from_name(std::string_view name) {
  for (const auto& d : kDtypes)
    if (d.name == name) return d.id;
  return std::nullopt;
}

std::optional<Op> op_from_name(std::string_view name) {
  for (const auto& o : kOps)
    if (o.name == name) return o.id;
  return std::nullopt;
}

}  // namespace onesided
