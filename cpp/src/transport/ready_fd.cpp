#include "transport/ready_fd.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

#include "onesided/error.hpp"
#include "transport/fork_generation.hpp"

namespace onesided::detail {
namespace {

std::mutex made_mutex;
std::atomic<int> ready_fd{-1};
std::uint64_t made_in = 0;  // guarded by made_mutex
std::atomic<int> awaited_count{0};

}  // namespace

int ReadyFd::fd() {
  const std::uint64_t gen = fork_generation();
  std::lock_guard lk(made_mutex);
  int f = ready_fd.load(std::memory_order_relaxed);
  if (f >= 0 && made_in == gen) return f;
  // First use, or a child made by fork(): its copy of the parent's eventfd
  // is closed (the parent's stays open) and it makes its own.
  if (f >= 0) ::close(f);
  f = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (f < 0) raise(ErrorCategory::Transport, std::string("eventfd: ") + std::strerror(errno));
  made_in = gen;
  ready_fd.store(f, std::memory_order_release);
  return f;
}

void ReadyFd::awaited(int delta) { awaited_count.fetch_add(delta, std::memory_order_relaxed); }
bool ReadyFd::any_awaited() { return awaited_count.load(std::memory_order_relaxed) > 0; }

void ReadyFd::ring() {
  const int f = ready_fd.load(std::memory_order_acquire);
  if (f < 0) return;
  const std::uint64_t one = 1;
  // Cannot block (EFD_NONBLOCK); fails only when the counter would overflow,
  // and then the fd is readable anyway.
  [[maybe_unused]] const ssize_t n = ::write(f, &one, sizeof one);
}

}  // namespace onesided::detail
