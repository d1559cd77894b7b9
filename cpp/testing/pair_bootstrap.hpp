// Two ranks joined by a socketpair: the smallest real Bootstrap, shared by
// the C++ unit tests (cpp/tests) and the C++ benchmark (cpp/bench). A read
// or write interrupted by a signal is retried; a peer that is gone makes
// every later call throw.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "onesided/bootstrap.hpp"

namespace onesided::testing {

class PairBootstrap final : public onesided::Bootstrap {
 public:
  PairBootstrap(int rank, int fd) : rank_(rank), fd_(fd) {}
  int rank() const override { return rank_; }
  int size() const override { return 2; }
  std::vector<std::string> allgather(const std::string& mine) override {
    send_all(mine);
    std::string theirs = recv_all();
    return rank_ == 0 ? std::vector<std::string>{mine, theirs} : std::vector<std::string>{theirs, mine};
  }
  void barrier() override { allgather(""); }

 private:
  void write_n(const void* p, std::size_t n) {
    auto* c = static_cast<const char*>(p);
    while (n) {
      ssize_t w = ::write(fd_, c, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) throw std::runtime_error("bootstrap write failed (the other rank is gone?)");
      c += w;
      n -= static_cast<std::size_t>(w);
    }
  }
  void read_n(void* p, std::size_t n) {
    auto* c = static_cast<char*>(p);
    while (n) {
      ssize_t r = ::read(fd_, c, n);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) throw std::runtime_error("bootstrap read failed (the other rank is gone?)");
      c += r;
      n -= static_cast<std::size_t>(r);
    }
  }
  void send_all(const std::string& s) {
    std::uint64_t n = s.size();
    write_n(&n, sizeof n);
    write_n(s.data(), s.size());
  }
  std::string recv_all() {
    std::uint64_t n;
    read_n(&n, sizeof n);
    std::string s(n, '\0');
    read_n(s.data(), n);
    return s;
  }
  int rank_, fd_;
};

}  // namespace onesided::testing
