// The accumulate_ordering info key: which orders accumulate-style ops from
// one origin to overlapping memory at one target must keep (MPI-3.1 §11.7.2).
#pragma once

#include <string>
#include <string_view>

namespace onesided::detail {

struct Ordering {
  bool rar = true, raw = true, war = true, waw = true;  // MPI's default: strict

  // "none" or a comma list of rar, raw, war, waw in any order; raises an
  // Argument error naming the bad item.
  static Ordering parse(std::string_view value);
  std::string str() const;  // canonical form: "rar,raw,war,waw" or "none"
  bool operator==(const Ordering&) const = default;
};

}  // namespace onesided::detail
