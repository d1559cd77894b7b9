// The accumulate_ops info key: which (function, op) pairs a window's program
// will use. Knowing them lets onesided pick native atomics whenever every
// declared op is native (seed 001); a call outside the set is refused.
//
// Grammar (whitespace around items ignored):
//   value    := "" | "all" | "same_op" | "same_op_no_op" | item ("," item)*
//   item     := function [":" op]
//   function := accumulate | get_accumulate | fetch_and_op | compare_and_swap | rmw | rmw2
//   op       := a name from the op table valid for that function (rmw also
//               takes "swap" for replace); no op means every op it takes.
// "same_op" and "same_op_no_op" (MPI's values) name no op, so they declare
// everything: the default, which is stronger than what they ask.
#pragma once

#include <bitset>
#include <string>
#include <string_view>

#include "onesided/types.hpp"

namespace onesided::detail {

class OpSet {
 public:
  static OpSet all();
  static OpSet parse(std::string_view value);

  bool contains(Function f, Op op) const { return bits_[index(f, op)]; }
  bool is_all() const { return *this == all(); }
  // The canonical value: "all" or the sorted item list.
  std::string str() const;
  bool operator==(const OpSet&) const = default;

 private:
  static std::size_t index(Function f, Op op) {
    return static_cast<std::size_t>(f) * kNumOps + static_cast<std::size_t>(op);
  }
  void add(Function f, Op op) { bits_.set(index(f, op)); }
  std::bitset<kNumFunctions * kNumOps> bits_;
};

}  // namespace onesided::detail
