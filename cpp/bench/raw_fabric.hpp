// The benchmark's baseline: the fewest libfabric calls that do each
// operation between two processes, with no onesided code in the way. Same
// fi_getinfo hints as onesided's transport (cpp/src/fabric_transport.cpp:
// caps, msg_order, mr_mode, mode, threading), so both sit on the same
// provider configuration. Every fi_* return code is checked; a failure
// throws with the call's name and fi_strerror's text.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "pair_bootstrap.hpp"

namespace onesided_bench {

using onesided::testing::PairBootstrap;

class RawFabric {
 public:
  static constexpr int kCells = 8;

  // Collective over `boot`: opens an FI_EP_RDM endpoint on `provider`,
  // registers kCells int64 cells and exchanges address, cell address and key
  // with the other rank. `loopback`: bind to 127.0.0.1 (network providers).
  RawFabric(const std::string& provider, bool loopback, PairBootstrap& boot);
  ~RawFabric();
  RawFabric(const RawFabric&) = delete;
  RawFabric& operator=(const RawFabric&) = delete;

  const std::string& provider() const { return provider_; }
  // This rank's registered cells (the target's memory).
  volatile std::int64_t* cells() { return cells_; }

  // Origin side: one operation on the peer's cell `cell`, then spin on
  // fi_cq_read until its completion. Values are int64.
  void put(std::int64_t value, int cell);              // fi_writemsg, FI_DELIVERY_COMPLETE
  std::int64_t get(int cell);                          // fi_read
  void atomic_sum(std::int64_t value, int cell);       // fi_atomicmsg FI_SUM, FI_DELIVERY_COMPLETE
  std::int64_t fetch_sum(std::int64_t value, int cell);  // fi_fetch_atomic FI_SUM
  std::int64_t cswap(std::int64_t compare, std::int64_t swap, int cell);  // fi_compare_atomic FI_CSWAP
  std::int64_t mswap(std::int64_t mask, std::int64_t swap, int cell);     // fi_compare_atomic FI_MSWAP

  // Target side: one fi_cq_read (shm and tcp progress only when polled).
  void poll();

 private:
  struct State;
  void wait_completion(const char* call);
  std::int64_t compare_atomic(std::int64_t compare, std::int64_t swap, int cell, int op);
  std::string provider_;
  std::unique_ptr<State> s_;
  volatile std::int64_t* cells_ = nullptr;
};

}  // namespace onesided_bench
