#include "transport/fork_generation.hpp"

#include <pthread.h>

#include <atomic>
#include <string>

#include "onesided/error.hpp"

namespace onesided::detail {
namespace {

// Written by the atfork child handler (one thread exists then) and read by
// anyone; relaxed: a fork is no synchronisation, only a change of process.
std::atomic<std::uint64_t> generation{0};

}  // namespace

std::uint64_t fork_generation() {
  static const bool registered = [] {
    ::pthread_atfork(nullptr, nullptr, [] { generation.fetch_add(1, std::memory_order_relaxed); });
    return true;
  }();
  (void)registered;
  return generation.load(std::memory_order_relaxed);
}

const std::atomic<std::uint64_t>& fork_generation_word() {
  (void)fork_generation();  // registers the atfork handler that bumps it
  return generation;
}

void raise_forked(const char* what) {
  raise(ErrorCategory::Epoch, std::string(what) +
                                  " belongs to the process that forked this one: a child made by fork() cannot use "
                                  "its parent's windows or endpoints (libfabric is not fork-safe); start new "
                                  "processes with spawn or exec instead");
}

}  // namespace onesided::detail
