#include "progress.hpp"

#include <cstdlib>

namespace onesided::detail {
namespace {

std::chrono::microseconds env_us(const char* name, long fallback) {
  if (const char* v = std::getenv(name)) {
    char* end = nullptr;
    long x = std::strtol(v, &end, 10);
    if (end != v && x >= 0) return std::chrono::microseconds(x);
  }
  return std::chrono::microseconds(fallback);
}

}  // namespace

ProgressEngine::ProgressEngine(Transport& transport)
    : transport_(transport),
      hot_(env_us("ONESIDED_PROGRESS_HOT_US", 5000)),
      max_nap_(env_us("ONESIDED_PROGRESS_NAP_US", 200)) {
  thread_ = std::thread([this] { run(); });
}

ProgressEngine::~ProgressEngine() { stop(); }

void ProgressEngine::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

std::size_t ProgressEngine::poll() {
  try {
    return transport_.progress();
  } catch (const Error& e) {
    std::lock_guard lk(failure_mutex_);
    if (!failed_) failure_ = e.what();
    failed_ = true;
    throw;
  }
}

void ProgressEngine::check_failure() {
  if (!failed_) return;
  std::lock_guard lk(failure_mutex_);
  raise(ErrorCategory::Transport, "the fabric failed: " + failure_);
}

void ProgressEngine::run() {
  using clock = std::chrono::steady_clock;
  auto last_event = clock::now();
  auto nap = std::chrono::microseconds(10);
  while (!stop_) {
    std::size_t n = 0;
    try {
      n = poll();
    } catch (const Error&) {
      return;  // recorded by poll(); waiters raise it
    }
    if (n > 0) {
      last_event = clock::now();
      nap = std::chrono::microseconds(10);
      continue;
    }
    // Spin while traffic is recent (latency), nap with growing pauses when
    // idle (CPU for the application, which shares the cores).
    if (expected_.load(std::memory_order_relaxed) > 0 || clock::now() - last_event < hot_) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(nap);
      nap = std::min(nap * 2, max_nap_);
    }
  }
}

}  // namespace onesided::detail
