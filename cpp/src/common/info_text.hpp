// Splitting and trimming info values (lists such as "sum,min" or
// "rar, raw"): the grammars of atomics/op_set.cpp and order/ordering.cpp
// share them, and neither folder owns the other.
#pragma once

#include <string_view>
#include <vector>

namespace onesided::detail {

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

inline std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (std::size_t start = 0;;) {
    const auto end = s.find(sep, start);
    out.push_back(s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

}  // namespace onesided::detail
