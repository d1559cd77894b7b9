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

}  // namespace

OpSet OpSet::all() {
  OpSet s;
  for (auto f : kFunctions)
    for (const auto& o : kOps)
      if (function_admits(f, o.id)) s.add(f, o.id);
  return s;
}

OpSet OpSet::parse(std::string_view value) {
  const auto v = trim(value);
  if (v.empty() || v == "all" || v == "same_op" || v == "same_op_no_op") return all();
  OpSet s;
  for (auto raw : split(v, ',')) {
    const auto item = trim(raw);
    const auto colon = item.find(':');
    const auto fname = trim(item.substr(0, colon));
    const Function* f = nullptr;
    for (const auto& cand : kFunctions)
      if (function_name(cand) == fname) f = &cand;
    if (!f) bad(item, "names no function");
    if (colon == std::string_view::npos) {
      for (const auto& o : kOps)
        if (function_admits(*f, o.id)) s.add(*f, o.id);
      continue;
    }
    const auto oname = trim(item.substr(colon + 1));
    auto op = op_from_name(oname == "swap" && *f == Function::Rmw ? "replace" : oname);
    if (!op) bad(item, "names no op");
    if (!function_admits(*f, *op)) bad(item, "is not an op " + std::string(fname) + " takes");
    s.add(*f, *op);
  }
  return s;
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
  return out;
}

}  // namespace onesided::detail
