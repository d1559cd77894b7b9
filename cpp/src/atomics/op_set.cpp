#include "atomics/op_set.hpp"

#include "common/info_text.hpp"
#include "onesided/error.hpp"

namespace onesided::detail {
namespace {

[[noreturn]] void bad(std::string_view item, const std::string& why) {
  raise(ErrorCategory::Argument,
        "accumulate_ops: '" + std::string(item) + "' " + why +
            " (expected a comma list of function[:op], e.g. fetch_and_op:sum,compare_and_swap)");
}

const Function* function_named(std::string_view name) {
  for (const auto& f : kFunctions)
    if (function_name(f) == name) return &f;
  return nullptr;
}

}  // namespace

OpSet OpSet::all() {
  // Built once: every window's settings start from it (a tenth of a later
  // window's creation of its own when built each time).
  static const OpSet every = [] {
    OpSet s;
    for (auto f : kFunctions)
      for (const auto& o : kOps)
        if (function_admits(f, o.id)) s.add(f, o.id);
    return s;
  }();
  return every;
}

OpSet OpSet::operator&(const OpSet& other) const {
  OpSet s;
  s.bits_ = bits_ & other.bits_;
  return s;
}

// One item of onesided's grammar, `function[:op]`. Returns false, or raises
// when `strict`, for an item that names no function, no op, or an op the
// function does not take.
bool OpSet::add_item(std::string_view item, bool strict) {
  auto refuse = [&](const std::string& why) {
    if (strict) bad(item, why);
    return false;
  };
  const auto colon = item.find(':');
  const auto fname = trim(item.substr(0, colon));
  const Function* f = function_named(fname);
  if (!f) return refuse("names no function");
  if (colon == std::string_view::npos) {
    for (const auto& o : kOps)
      if (function_admits(*f, o.id)) add(*f, o.id);
    return true;
  }
  const auto oname = trim(item.substr(colon + 1));
  auto op = op_from_name(oname == "swap" && *f == Function::Rmw ? "replace" : oname);
  if (!op) return refuse("names no op");
  if (!function_admits(*f, *op)) return refuse("is not an op " + std::string(fname) + " takes");
  add(*f, *op);
  return true;
}

OpSet OpSet::parse(std::string_view value) {
  const auto v = trim(value);
  if (v.empty() || v == "all" || v == "same_op" || v == "same_op_no_op") return all();
  OpSet s;
  if (v == "none") return s;
  for (auto raw : split(v, ',')) s.add_item(trim(raw), true);
  return s;
}

OpSet OpSet::parse_mpich(std::string_view value) {
  const auto v = trim(value);
  // MPICH reads these two by their prefix (strncmp), before any list.
  if (v.starts_with("none")) return OpSet{};
  if (v.empty() || v.starts_with("any_op")) return all();
  OpSet s;
  bool known = false;
  for (auto raw : split(v, ',')) {
    const auto item = trim(raw);
    if (item == "cswap" || item == "compare_and_swap") {
      s.add(Function::CompareAndSwap, Op::CswapEq);
      known = true;
    } else if (auto op = op_from_name(item)) {
      // An MPI op name: every accumulate-style call that takes it.
      for (auto f : kFunctions)
        if (function_admits(f, *op)) s.add(f, *op);
      known = true;
    } else {
      known = s.add_item(item, false) || known;  // onesided's own items too
    }
  }
  // As MPICH: a value naming nothing it knows leaves the default.
  return known ? s : all();
}

std::string OpSet::str() const {
  if (is_all()) return "all";
  std::string out;
  for (auto f : kFunctions) {
    bool every = true, any = false;
    for (const auto& o : kOps) {
      if (!function_admits(f, o.id)) continue;
      every = every && contains(f, o.id);
      any = any || contains(f, o.id);
    }
    if (!any) continue;
    if (every) {
      out += (out.empty() ? "" : ",") + std::string(function_name(f));
      continue;
    }
    for (const auto& o : kOps)
      if (function_admits(f, o.id) && contains(f, o.id))
        out += (out.empty() ? "" : ",") + std::string(function_name(f)) + ":" + std::string(o.name);
  }
  return out.empty() ? "none" : out;
}

}  // namespace onesided::detail
