#include "raw_fabric.hpp"

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <array>
#include <cstring>
#include <stdexcept>

namespace onesided_bench {
namespace {

[[noreturn]] void fail(const char* call, long ret) {
  throw std::runtime_error(std::string("raw libfabric: ") + call + " failed: " +
                           fi_strerror(static_cast<int>(-ret)) + " (" + std::to_string(ret) + ")");
}
void check(const char* call, long ret) {
  if (ret < 0) fail(call, ret);
}

void pack(std::string& out, const void* p, std::size_t n) { out.append(static_cast<const char*>(p), n); }

}  // namespace

struct RawFabric::State {
  fi_info* info = nullptr;
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_av* av = nullptr;
  fid_cq* cq = nullptr;
  fid_ep* ep = nullptr;
  fid_mr* mr = nullptr;
  fi_addr_t peer = FI_ADDR_UNSPEC;
  std::uint64_t peer_base = 0;  // the peer's cells, as its key addresses them
  std::uint64_t peer_key = 0;
  alignas(64) std::array<std::int64_t, kCells> cells{};
  alignas(64) std::int64_t origin = 0, compare = 0, result = 0;
  fi_context2 ctx{};  // one operation in flight at a time (FI_CONTEXT2 mode)
};

RawFabric::RawFabric(const std::string& provider, bool loopback, PairBootstrap& boot)
    : s_(std::make_unique<State>()) {
  State& s = *s_;
  // The hints of onesided's transport (cpp/src/fabric_transport.cpp,
  // find_info), so both sides of the comparison get the same provider
  // configuration: FI_MSG too (onesided's control messages), and ordered
  // atomics where the provider has them (tcp;ofi_rxm: no). The order bits
  // matter: without them an 8-byte fi_read on shm took 2-3 us instead of
  // 0.7-0.8 us on the development machine.
  constexpr std::uint64_t kAtomicOrder =
      FI_ORDER_ATOMIC_RAR | FI_ORDER_ATOMIC_RAW | FI_ORDER_ATOMIC_WAR | FI_ORDER_ATOMIC_WAW;
  int ret = -FI_ENODATA;
  const std::uint64_t orders[] = {FI_ORDER_SAS | kAtomicOrder, FI_ORDER_SAS};
  for (const std::uint64_t order : orders) {
    fi_info* hints = fi_allocinfo();
    if (!hints) throw std::runtime_error("raw libfabric: fi_allocinfo failed");
    hints->caps = FI_MSG | FI_RMA | FI_ATOMIC;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->ep_attr->type = FI_EP_RDM;
    hints->tx_attr->msg_order = order;
    hints->rx_attr->msg_order = order;
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->fabric_attr->prov_name = strdup(provider.c_str());
    ret = loopback ? fi_getinfo(FI_VERSION(1, 9), "127.0.0.1", nullptr, FI_SOURCE, hints, &s.info)
                   : fi_getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &s.info);
    fi_freeinfo(hints);
    if (ret == 0) break;
  }
  check("fi_getinfo", ret);
  provider_ = s.info->fabric_attr->prov_name;
  check("fi_fabric", fi_fabric(s.info->fabric_attr, &s.fabric, nullptr));
  check("fi_domain", fi_domain(s.fabric, s.info, &s.domain, nullptr));
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_UNSPEC;
  check("fi_av_open", fi_av_open(s.domain, &av_attr, &s.av, nullptr));
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_CONTEXT;
  cq_attr.wait_obj = FI_WAIT_NONE;
  check("fi_cq_open", fi_cq_open(s.domain, &cq_attr, &s.cq, nullptr));
  check("fi_endpoint", fi_endpoint(s.domain, s.info, &s.ep, nullptr));
  check("fi_ep_bind(av)", fi_ep_bind(s.ep, &s.av->fid, 0));
  check("fi_ep_bind(cq)", fi_ep_bind(s.ep, &s.cq->fid, FI_TRANSMIT | FI_RECV));
  check("fi_enable", fi_enable(s.ep));

  // Every atomic the benchmark times must exist natively on int64.
  std::size_t count = 0;
  check("fi_atomicvalid(FI_SUM)", fi_atomicvalid(s.ep, FI_INT64, FI_SUM, &count));
  check("fi_fetch_atomicvalid(FI_SUM)", fi_fetch_atomicvalid(s.ep, FI_INT64, FI_SUM, &count));
  check("fi_compare_atomicvalid(FI_CSWAP)", fi_compare_atomicvalid(s.ep, FI_INT64, FI_CSWAP, &count));
  check("fi_compare_atomicvalid(FI_MSWAP)", fi_compare_atomicvalid(s.ep, FI_INT64, FI_MSWAP, &count));

  const auto mr_mode = s.info->domain_attr->mr_mode;
  check("fi_mr_reg", fi_mr_reg(s.domain, s.cells.data(), sizeof s.cells, FI_REMOTE_READ | FI_REMOTE_WRITE, 0,
                               (mr_mode & FI_MR_PROV_KEY) ? 0 : 1, 0, &s.mr, nullptr));
  if (mr_mode & FI_MR_ENDPOINT) {
    check("fi_mr_bind", fi_mr_bind(s.mr, &s.ep->fid, 0));
    check("fi_mr_enable", fi_mr_enable(s.mr));
  }
  const std::uint64_t key = fi_mr_key(s.mr);
  if (key == FI_KEY_NOTAVAIL) throw std::runtime_error("raw libfabric: fi_mr_key: key not available");
  const std::uint64_t base = (mr_mode & FI_MR_VIRT_ADDR) ? reinterpret_cast<std::uint64_t>(s.cells.data()) : 0;
  cells_ = s.cells.data();

  std::array<char, 512> name{};
  size_t len = name.size();
  check("fi_getname", fi_getname(&s.ep->fid, name.data(), &len));
  std::string mine;
  pack(mine, &base, sizeof base);
  pack(mine, &key, sizeof key);
  pack(mine, name.data(), len);
  const std::string theirs = boot.allgather(mine)[1 - boot.rank()];
  if (theirs.size() < 16) throw std::runtime_error("raw libfabric: short address record");
  std::memcpy(&s.peer_base, theirs.data(), 8);
  std::memcpy(&s.peer_key, theirs.data() + 8, 8);
  const int n = fi_av_insert(s.av, theirs.data() + 16, 1, &s.peer, 0, nullptr);
  if (n != 1) fail("fi_av_insert", n < 0 ? n : -FI_EINVAL);
  boot.barrier();  // both ends ready before the first operation
}

RawFabric::~RawFabric() {
  State& s = *s_;
  if (s.mr) fi_close(&s.mr->fid);
  if (s.ep) fi_close(&s.ep->fid);
  if (s.cq) fi_close(&s.cq->fid);
  if (s.av) fi_close(&s.av->fid);
  if (s.domain) fi_close(&s.domain->fid);
  if (s.fabric) fi_close(&s.fabric->fid);
  if (s.info) fi_freeinfo(s.info);
}

void RawFabric::wait_completion(const char* call) {
  State& s = *s_;
  fi_cq_entry entry;
  for (;;) {
    const ssize_t n = fi_cq_read(s.cq, &entry, 1);
    if (n == 1) return;
    if (n == -FI_EAGAIN) continue;
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry err{};
      const ssize_t r = fi_cq_readerr(s.cq, &err, 0);
      if (r < 0) fail("fi_cq_readerr", r);
      char buf[256];
      throw std::runtime_error(std::string("raw libfabric: ") + call + " completed with an error: " +
                               fi_strerror(err.err) + ": " +
                               fi_cq_strerror(s.cq, err.prov_errno, err.err_data, buf, sizeof buf));
    }
    fail("fi_cq_read", n);
  }
}

// Posts with `attempt` (retrying while the provider says FI_EAGAIN, which
// needs progress), then waits for the completion.
#define RAW_POST(call, expr)                                  \
  do {                                                        \
    ssize_t ret_;                                             \
    while ((ret_ = (expr)) == -FI_EAGAIN) {                   \
      fi_cq_entry e_;                                         \
      const ssize_t n_ = fi_cq_read(s.cq, &e_, 1);            \
      if (n_ < 0 && n_ != -FI_EAGAIN) fail("fi_cq_read", n_); \
    }                                                         \
    check(call, ret_);                                        \
    wait_completion(call);                                    \
  } while (0)

void RawFabric::put(std::int64_t value, int cell) {
  State& s = *s_;
  s.origin = value;
  iovec iov{&s.origin, sizeof s.origin};
  fi_rma_iov rma{s.peer_base + 8u * static_cast<unsigned>(cell), sizeof s.origin, s.peer_key};
  fi_msg_rma msg{};
  msg.msg_iov = &iov;
  msg.iov_count = 1;
  msg.addr = s.peer;
  msg.rma_iov = &rma;
  msg.rma_iov_count = 1;
  msg.context = &s.ctx;
  // Delivery complete: the data is in target memory, as onesided's flush promises.
  RAW_POST("fi_writemsg", fi_writemsg(s.ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE));
}

std::int64_t RawFabric::get(int cell) {
  State& s = *s_;
  RAW_POST("fi_read", fi_read(s.ep, &s.result, sizeof s.result, nullptr, s.peer,
                              s.peer_base + 8u * static_cast<unsigned>(cell), s.peer_key, &s.ctx));
  return s.result;
}

void RawFabric::atomic_sum(std::int64_t value, int cell) {
  State& s = *s_;
  s.origin = value;
  fi_ioc ioc{&s.origin, 1};
  fi_rma_ioc rma{s.peer_base + 8u * static_cast<unsigned>(cell), 1, s.peer_key};
  fi_msg_atomic msg{};
  msg.msg_iov = &ioc;
  msg.iov_count = 1;
  msg.addr = s.peer;
  msg.rma_iov = &rma;
  msg.rma_iov_count = 1;
  msg.datatype = FI_INT64;
  msg.op = FI_SUM;
  msg.context = &s.ctx;
  RAW_POST("fi_atomicmsg", fi_atomicmsg(s.ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE));
}

std::int64_t RawFabric::fetch_sum(std::int64_t value, int cell) {
  State& s = *s_;
  s.origin = value;
  RAW_POST("fi_fetch_atomic",
           fi_fetch_atomic(s.ep, &s.origin, 1, nullptr, &s.result, nullptr, s.peer,
                           s.peer_base + 8u * static_cast<unsigned>(cell), s.peer_key, FI_INT64, FI_SUM,
                           &s.ctx));
  return s.result;
}

// fi_compare_atomic: `compare` is the comperand (FI_CSWAP) or the mask (FI_MSWAP).
std::int64_t RawFabric::compare_atomic(std::int64_t compare, std::int64_t swap, int cell, int op) {
  State& s = *s_;
  s.origin = swap;
  s.compare = compare;
  RAW_POST("fi_compare_atomic",
           fi_compare_atomic(s.ep, &s.origin, 1, nullptr, &s.compare, nullptr, &s.result, nullptr, s.peer,
                             s.peer_base + 8u * static_cast<unsigned>(cell), s.peer_key, FI_INT64,
                             static_cast<fi_op>(op), &s.ctx));
  return s.result;
}

std::int64_t RawFabric::cswap(std::int64_t compare, std::int64_t swap, int cell) {
  return compare_atomic(compare, swap, cell, FI_CSWAP);
}

std::int64_t RawFabric::mswap(std::int64_t mask, std::int64_t swap, int cell) {
  return compare_atomic(mask, swap, cell, FI_MSWAP);
}

void RawFabric::poll() {
  State& s = *s_;
  fi_cq_entry entry;
  const ssize_t n = fi_cq_read(s.cq, &entry, 1);
  if (n < 0 && n != -FI_EAGAIN) fail("fi_cq_read (target)", n);
}

}  // namespace onesided_bench
