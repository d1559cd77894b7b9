// Fixed-layout records exchanged through Bootstrap::allgather at creation.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "onesided/error.hpp"

namespace onesided::detail {

struct Record {
  std::string bytes;
  template <class T>
  Record& put(const T& v) {
    bytes.append(reinterpret_cast<const char*>(&v), sizeof v);
    return *this;
  }
  Record& str(const std::string& s) {
    put(static_cast<std::uint32_t>(s.size()));
    bytes += s;
    return *this;
  }
};

struct RecordReader {
  const std::string& s;
  std::size_t at = 0;
  template <class T>
  T get() {
    T v;
    if (at + sizeof v > s.size()) raise(ErrorCategory::Internal, "short bootstrap record");
    std::memcpy(&v, s.data() + at, sizeof v);
    at += sizeof v;
    return v;
  }
  std::string str() {
    auto n = get<std::uint32_t>();
    if (at + n > s.size()) raise(ErrorCategory::Internal, "short bootstrap record");
    std::string v = s.substr(at, n);
    at += n;
    return v;
  }
};

}  // namespace onesided::detail
