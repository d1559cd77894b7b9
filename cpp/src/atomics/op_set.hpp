// The accumulate_ops info key: which (function, op) pairs a window's program
// will use. Knowing them lets onesided pick native atomics whenever every
// declared op is native (seed 001); a call outside the set is refused.
//
// Grammar of accumulate_ops (whitespace around items ignored):
//   value    := "" | "all" | "same_op" | "same_op_no_op" | "none" | item ("," item)*
//   item     := function [":" op]
//   function := accumulate | get_accumulate | fetch_and_op | compare_and_swap | rmw | rmw2
//   op       := a name from the op table valid for that function (rmw also
//               takes "swap" for replace); no op means every op it takes.
// "same_op" and "same_op_no_op" (MPI's values) name no op, so they declare
// everything: the default, which is stronger than what they ask. "none"
// declares no accumulate-style call at all.
//
// MPICH's which_accumulate_ops has MPICH's grammar: "none", "any_op", or a
// comma list of op names (max, min, sum, prod, maxloc, minloc, band, bor,
// bxor, land, lor, lxor, replace, no_op) and cswap (or compare_and_swap),
// each op declared for every call that takes it; onesided's items are
// accepted there too. As MPICH, items it does not know are ignored, and a
// list of nothing known leaves the default: that key never fails a window.
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
  static OpSet parse_mpich(std::string_view value);

  bool contains(Function f, Op op) const { return bits_[index(f, op)]; }
  bool is_all() const { return *this == all(); }
  // The canonical value: "all", "none" or the sorted item list.
  std::string str() const;
  bool operator==(const OpSet&) const = default;
  // What both declare (accumulate_ops and which_accumulate_ops together).
  OpSet operator&(const OpSet& other) const;

 private:
  static std::size_t index(Function f, Op op) {
    return static_cast<std::size_t>(f) * kNumOps + static_cast<std::size_t>(op);
  }
  void add(Function f, Op op) { bits_.set(index(f, op)); }
  bool add_item(std::string_view item, bool strict);
  std::bitset<kNumFunctions * kNumOps> bits_;
};

}  // namespace onesided::detail
