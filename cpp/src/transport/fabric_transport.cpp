// The libfabric implementation of Transport: an FI_EP_RDM endpoint with
// FI_MSG (for onesided's own control and software-atomic messages) and
// FI_RMA (for puts and gets), and FI_ATOMIC where the provider has it (for
// native atomics). Every fi_* return code is checked; failures
// carry the call's name and fi_strerror's text. The few fi_* functions that
// are real symbols rather than inline wrappers over ops tables are called
// through fabric_library(), the libfabric this process chose.
#include <rdma/fabric.h>
#include <unistd.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_atomic.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "onesided/error.hpp"
#include "transport/stale_shm.hpp"
#include "transport/fabric_choice.hpp"
#include "transport/fabric_library.hpp"
#include "transport/fabric_names.hpp"
#include "transport/loopback_atomics.hpp"
#include "transport/transport.hpp"

namespace onesided::detail {
namespace {

constexpr std::size_t kMessageCap = 64 * 1024;  // largest control/atomic message
constexpr std::size_t kReceiveBuffers = 64;

[[noreturn]] void fail(const char* call, long ret) {
  raise(ErrorCategory::Transport,
        std::string(call) + " failed: " + fabric_library().strerror(static_cast<int>(-ret)) + " (" +
            std::to_string(ret) + ")");
}

void check(const char* call, long ret) {
  if (ret < 0) fail(call, ret);
}

// Every operation posted to the provider carries one of these as its context
// (FI_CONTEXT2 mode: the provider may use the leading fi_context2): an RMA's or
// atomic's in its Completion's transport_room, a message's allocated with its bytes.
struct OpContext {
  fi_context2 fi{};
  enum Kind { Rma, Send, Receive } kind;
};
struct RmaContext : OpContext {
  Completion* done;
};
struct MessageContext : OpContext {
  std::vector<std::byte> payload;  // Send: bytes owned until completion; Receive: the buffer
};
static_assert(sizeof(RmaContext) <= Completion::kTransportRoom && std::is_trivially_destructible_v<RmaContext>);

RmaContext* rma_context(Completion* done) { return new (done->transport_room) RmaContext{{{}, OpContext::Rma}, done}; }

class FabricRegion final : public LocalRegion {
 public:
  FabricRegion(fid_mr* mr, RemoteRegion remote, std::mutex& fi_mutex)
      : mr_(mr), remote_(remote), fi_mutex_(fi_mutex) {}
  ~FabricRegion() override {
    // Closing an MR changes the provider's key table, which its progress
    // (on another thread) reads: serialise like every other fi_* call.
    std::lock_guard lk(fi_mutex_);
    if (mr_) fi_close(&mr_->fid);
  }
  RemoteRegion remote() const override { return remote_; }

 private:
  fid_mr* mr_;
  RemoteRegion remote_;
  std::mutex& fi_mutex_;
};

class FabricTransport final : public Transport {
 public:
  FabricTransport(const std::string& provider, bool loopback) {
    info_ = choose_fabric_info(provider, loopback);
    atomics_ = (info_->caps & FI_ATOMIC) != 0;
    order_ = atomic_order_of(*info_);
    provider_ = info_->fabric_attr->prov_name;
    check("fi_fabric", fabric_library().fabric(info_->fabric_attr, &fabric_, nullptr));
    check("fi_domain", fi_domain(fabric_, info_, &domain_, nullptr));

    fi_av_attr av_attr{};
    av_attr.type = FI_AV_UNSPEC;
    check("fi_av_open", fi_av_open(domain_, &av_attr, &av_, nullptr));

    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_MSG;
    cq_attr.wait_obj = FI_WAIT_NONE;
    check("fi_cq_open", fi_cq_open(domain_, &cq_attr, &cq_, nullptr));

    if (provider_ == "shm") {
      // shm names its region /dev/shm/<pid>:<n>:...; a killed process cannot
      // remove it, and a later one with the same pid then fails fi_enable with
      // EBUSY. So before the first shm endpoint, regions named after this pid
      // go, and those of dead processes too (transport/stale_shm.hpp).
      static std::once_flag once;
      std::call_once(once, [] { remove_stale_shared_memory(true); });
    }
    check("fi_endpoint", fi_endpoint(domain_, info_, &ep_, nullptr));
    check("fi_ep_bind(av)", fi_ep_bind(ep_, &av_->fid, 0));
    check("fi_ep_bind(cq)", fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV));
    check("fi_enable", fi_enable(ep_));

    inject_size_ = info_->tx_attr->inject_size;
    // Each stretch is one local iovec and one remote one: the smaller limit.
    max_stretches_ = std::max<std::size_t>(1, std::min(info_->tx_attr->iov_limit, info_->tx_attr->rma_iov_limit));
    if (atomics_ && provider_.find("ofi_rxd") != std::string::npos) {
      // libfabric 1.17's rxd crashes (in fi_cq_read) on the loopback atomic
      // the probe below issues, before any check of ours can see a result:
      // the probe cannot be run, so no native atomics are assumed.
      no_native_ = "provider " + provider_ + " is not probed for native atomics (its loopback atomics crash "
                   "libfabric's rxd); software atomics";
      atomics_ = false;
    }
    if (atomics_) {
      const PeerAddr self = insert_peer(address());
      no_native_ = loopback_atomics_fault(*this, self, provider_);
      atomics_ = no_native_.empty();
      if (atomics_ && max_stretches_ > 1) {
        // Vectored atomics take the same stretch limit as vectored writes;
        // a provider that fails them keeps its scalar atomics.
        max_atomic_stretches_ = max_stretches_;
        if (!loopback_stretches_faithful(*this, self)) max_atomic_stretches_ = 1;
      }
    }
    max_message_ = std::min<std::size_t>(kMessageCap, info_->ep_attr->max_msg_size);
    max_message_ -= sizeof(Envelope);
    for (std::size_t i = 0; i < kReceiveBuffers; ++i) {
      auto ctx = std::make_unique<MessageContext>();
      ctx->kind = OpContext::Receive;
      ctx->payload.resize(max_message_ + sizeof(Envelope));
      post_receive(ctx.get());
      receives_.push_back(std::move(ctx));
    }
  }

  ~FabricTransport() override {
    // Closing the endpoint first cancels the posted receives; their contexts
    // are ours to free.
    if (ep_) fi_close(&ep_->fid);
    if (cq_) fi_close(&cq_->fid);
    if (av_) fi_close(&av_->fid);
    if (domain_) fi_close(&domain_->fid);
    if (fabric_) fi_close(&fabric_->fid);
    if (info_) fabric_library().freeinfo(info_);
  }

  const std::string& provider() const override { return provider_; }

  std::string address() const override {
    std::lock_guard lk(fi_mutex_);
    std::array<char, 512> name{};
    size_t len = name.size();
    check("fi_getname", fi_getname(&ep_->fid, name.data(), &len));
    return std::string(name.data(), len);
  }

  PeerAddr insert_peer(const std::string& address) override {
    std::lock_guard lk(fi_mutex_);
    if (auto it = peers_.find(address); it != peers_.end()) return it->second;
    fi_addr_t addr = FI_ADDR_UNSPEC;
    int n = fi_av_insert(av_, address.data(), 1, &addr, 0, nullptr);
    if (n != 1) fail("fi_av_insert", n < 0 ? n : -FI_EINVAL);
    peers_.emplace(address, addr);
    return addr;
  }

  std::unique_ptr<LocalRegion> register_region(void* base, std::size_t len) override {
    if (len == 0) return std::make_unique<FabricRegion>(nullptr, RemoteRegion{}, fi_mutex_);
    std::lock_guard lk(fi_mutex_);
    const auto mode = info_->domain_attr->mr_mode;
    fid_mr* mr = nullptr;
    const std::uint64_t requested_key = (mode & FI_MR_PROV_KEY) ? 0 : next_key_++;
    check("fi_mr_reg", fi_mr_reg(domain_, base, len, FI_REMOTE_READ | FI_REMOTE_WRITE, 0,
                                 requested_key, 0, &mr, nullptr));
    if (mode & FI_MR_ENDPOINT) {
      int ret = fi_mr_bind(mr, &ep_->fid, 0);
      if (ret == 0) ret = fi_mr_enable(mr);
      if (ret != 0) {
        fi_close(&mr->fid);
        fail("fi_mr_bind/fi_mr_enable", ret);
      }
    }
    RemoteRegion remote;
    remote.key = fi_mr_key(mr);
    if (remote.key == FI_KEY_NOTAVAIL) {
      fi_close(&mr->fid);
      raise(ErrorCategory::Transport, "fi_mr_key: key not available (FI_MR_RAW is not supported)");
    }
    remote.addr = (mode & FI_MR_VIRT_ADDR) ? reinterpret_cast<std::uint64_t>(base) : 0;
    return std::make_unique<FabricRegion>(mr, remote, fi_mutex_);
  }

  void write(PeerAddr peer, const void* src, std::size_t len, RemoteRegion region,
             std::uint64_t offset, Completion* done) override {
    auto* ctx = rma_context(done);
    post("fi_writemsg", [=, this] {
      iovec iov{const_cast<void*>(src), len};
      fi_rma_iov rma{region.addr + offset, len, region.key};
      fi_msg_rma msg{};
      msg.msg_iov = &iov;
      msg.iov_count = 1;
      msg.addr = peer;
      msg.rma_iov = &rma;
      msg.rma_iov_count = 1;
      msg.context = ctx;
      // Delivery complete: the completion tells us the data is in target
      // memory, which is what Flush promises.
      return fi_writemsg(ep_, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE);
    });
  }

  void read(PeerAddr peer, void* dst, std::size_t len, RemoteRegion region, std::uint64_t offset,
            Completion* done) override {
    auto* ctx = rma_context(done);
    post("fi_read", [=, this] {
      return fi_read(ep_, dst, len, nullptr, peer, region.addr + offset, region.key, ctx);
    });
  }

  std::size_t max_stretches() const override { return max_stretches_; }

  void write_stretches(PeerAddr peer, std::span<const Stretch> stretches, RemoteRegion region,
                       Completion* done) override {
    post_stretches("fi_writemsg", peer, stretches, region, done, [this](const fi_msg_rma& msg) {
      return fi_writemsg(ep_, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE);
    });
  }

  void read_stretches(PeerAddr peer, std::span<const Stretch> stretches, RemoteRegion region,
                      Completion* done) override {
    post_stretches("fi_readmsg", peer, stretches, region, done,
                   [this](const fi_msg_rma& msg) { return fi_readmsg(ep_, &msg, FI_COMPLETION); });
  }

  void send(PeerAddr peer, const void* msg, std::size_t len) override {
    if (len > max_message_) raise(ErrorCategory::Internal, "message larger than max_message_size");
    // Providers order the matching of messages (FI_ORDER_SAS) but not always
    // their completion: tcp;ofi_rxm completes a large rendezvous message
    // after small ones sent later. The envelope's sequence number lets the
    // receiver restore send order.
    std::vector<std::byte> bytes(sizeof(Envelope) + len);
    std::memcpy(bytes.data() + sizeof(Envelope), msg, len);
    {
      std::lock_guard lk(fi_mutex_);
      Envelope env{sender_id_, next_seq_[peer]++};
      std::memcpy(bytes.data(), &env, sizeof env);
    }
    if (bytes.size() <= inject_size_) {
      // Injected data is copied by the provider; no completion is generated.
      post("fi_inject", [this, peer, bytes = std::move(bytes)] {
        return fi_inject(ep_, bytes.data(), bytes.size(), peer);
      });
      return;
    }
    auto* ctx = new MessageContext{};
    ctx->kind = OpContext::Send;
    ctx->payload = std::move(bytes);
    post("fi_send", [=, this] {
      return fi_send(ep_, ctx->payload.data(), ctx->payload.size(), nullptr, peer, ctx);
    });
  }

  std::size_t max_message_size() const override { return max_message_; }
  std::size_t eager_message_size() const override {
    return inject_size_ > sizeof(Envelope) ? std::min(inject_size_ - sizeof(Envelope), max_message_) : 0;
  }

  std::size_t native_count(AtomicKind kind, Op op, Dtype dtype) override {
    const auto fop = fabric_op(op);
    const auto fdt = fabric_datatype(dtype);
    if (!atomics_ || !fop || !fdt) return 0;
    std::lock_guard lk(fi_mutex_);
    std::size_t count = 0;
    int ret = -FI_EOPNOTSUPP;
    switch (kind) {
      case AtomicKind::Fetch: ret = fi_fetch_atomicvalid(ep_, *fdt, *fop, &count); break;
      case AtomicKind::Compare: ret = fi_compare_atomicvalid(ep_, *fdt, *fop, &count); break;
    }
    return ret == 0 ? count : 0;
  }

  AtomicOrder atomic_order() const override { return order_; }
  const std::string& native_unavailable() const override { return no_native_; }

  void atomic(PeerAddr peer, AtomicKind kind, Op op, Dtype dtype, const void* origin,
              const void* compare, void* result, std::size_t count, RemoteRegion region,
              std::uint64_t offset, Completion* done) override {
    const auto fop = fabric_op(op);
    const auto fdt = fabric_datatype(dtype);
    if (!fop || !fdt) raise(ErrorCategory::Internal, "no native form for this atomic");
    auto* ctx = rma_context(done);
    const std::uint64_t addr = region.addr + offset;
    switch (kind) {
      case AtomicKind::Fetch:
        post("fi_fetch_atomic", [=, this, dt = *fdt, o = *fop] {
          // FI_ATOMIC_READ ignores buf, but not every provider tolerates null.
          const void* buf = origin ? origin : result;
          return fi_fetch_atomic(ep_, buf, count, nullptr, result, nullptr, peer, addr, region.key, dt,
                                 o, ctx);
        });
        break;
      case AtomicKind::Compare:
        post("fi_compare_atomic", [=, this, dt = *fdt, o = *fop] {
          return fi_compare_atomic(ep_, origin, count, nullptr, compare, nullptr, result, nullptr, peer,
                                   addr, region.key, dt, o, ctx);
        });
        break;
    }
  }

  std::size_t max_atomic_stretches() const override { return max_atomic_stretches_; }

  void fetch_atomic_stretches(PeerAddr peer, Op op, Dtype dtype, std::span<const AtomicStretch> stretches,
                              RemoteRegion region, Completion* done) override {
    const auto fop = fabric_op(op);
    const auto fdt = fabric_datatype(dtype);
    if (!fop || !fdt) raise(ErrorCategory::Internal, "no native form for this atomic");
    check_stretch_count("fi_fetch_atomicmsg", stretches.size(), max_atomic_stretches_);
    auto* ctx = rma_context(done);
    std::vector<fi_ioc> in, out;
    std::vector<fi_rma_ioc> rma;
    for (const AtomicStretch& st : stretches) {
      // FI_ATOMIC_READ ignores buf, but not every provider tolerates null.
      in.push_back({const_cast<std::byte*>(st.origin ? st.origin : st.result), st.count});
      out.push_back({st.result, st.count});
      rma.push_back({region.addr + st.offset, st.count, region.key});
    }
    post("fi_fetch_atomicmsg", [=, this, dt = *fdt, o = *fop, in = std::move(in), out = std::move(out),
                                rma = std::move(rma)]() mutable {
      const fi_msg_atomic msg{.msg_iov = in.data(),
                              .iov_count = in.size(),
                              .addr = peer,
                              .rma_iov = rma.data(),
                              .rma_iov_count = rma.size(),
                              .datatype = dt,
                              .op = o,
                              .context = ctx};
      return fi_fetch_atomicmsg(ep_, &msg, out.data(), nullptr, out.size(), FI_COMPLETION);
    });
  }

  void set_message_handler(MessageHandler handler) override { handler_ = std::move(handler); }

  std::size_t progress(bool wait_turn) override {
    std::unique_lock pl = wait_turn ? std::unique_lock(progress_mutex_)
                                    : std::unique_lock(progress_mutex_, std::try_to_lock);
    if (!pl.owns_lock()) return 0;
    std::array<fi_cq_msg_entry, 32> entries;
    ssize_t n = 0;
    fi_cq_err_entry err{};
    std::string err_text;
    {
      std::lock_guard lk(fi_mutex_);
      drain_deferred();
      n = fi_cq_read(cq_, entries.data(), entries.size());
      if (n == -FI_EAVAIL) {
        ssize_t r = fi_cq_readerr(cq_, &err, 0);
        if (r < 0) fail("fi_cq_readerr", r);
        char buf[256];
        err_text = std::string(fabric_library().strerror(err.err)) + ": " +
                   fi_cq_strerror(cq_, err.prov_errno, err.err_data, buf, sizeof buf);
      } else if (n < 0 && n != -FI_EAGAIN) {
        fail("fi_cq_read", n);
      }
    }
    std::size_t handled = 0;
    if (n == -FI_EAVAIL) {
      dispatch(static_cast<OpContext*>(err.op_context), 0, err_text.c_str());
      handled = 1;
    }
    for (ssize_t i = 0; i < n; ++i) dispatch(static_cast<OpContext*>(entries[i].op_context), entries[i].len, nullptr);
    if (n > 0) handled = static_cast<std::size_t>(n);
    // Completions may have freed what a deferred post waited for; the
    // next poll retries it anyway, so skip the lock when nothing waits.
    if (handled && any_deferred_.load(std::memory_order_relaxed)) {
      std::lock_guard lk(fi_mutex_);
      drain_deferred();
    }
    return handled;
  }

 private:
  struct Deferred {
    const char* call;
    std::function<ssize_t()> attempt;
  };

  // Posts through `attempt`; when the provider says FI_EAGAIN the post waits
  // in deferred_ (in issue order, so message order is kept) and progress()
  // retries it.
  template <class F>
  void post(const char* call, F&& attempt) {
    std::lock_guard lk(fi_mutex_);
    if (deferred_.empty()) {
      ssize_t ret = attempt();
      if (ret == 0) return;
      if (ret != -FI_EAGAIN) fail(call, ret);
    }
    deferred_.push_back(Deferred{call, std::function<ssize_t()>(std::forward<F>(attempt))});
    any_deferred_.store(true, std::memory_order_relaxed);
  }

  // Receives first (see post_receive), then the other posts in issue order.
  void drain_deferred() {
    while (!deferred_receives_.empty() && try_receive(deferred_receives_.front())) deferred_receives_.pop_front();
    while (!deferred_.empty()) {
      ssize_t ret = deferred_.front().attempt();
      if (ret == -FI_EAGAIN) break;
      const char* call = deferred_.front().call;
      deferred_.pop_front();
      if (ret != 0) {
        any_deferred_.store(!deferred_.empty() || !deferred_receives_.empty(), std::memory_order_relaxed);
        fail(call, ret);
      }
    }
    any_deferred_.store(!deferred_.empty() || !deferred_receives_.empty(), std::memory_order_relaxed);
  }

  // A vectored post takes 1 to `limit` stretches; callers plan them so.
  static void check_stretch_count(const char* call, std::size_t n, std::size_t limit) {
    if (n == 0 || n > limit)
      raise(ErrorCategory::Internal, std::string(call) + ": " + std::to_string(n) +
                                         " stretches, the provider takes 1 to " + std::to_string(limit));
  }

  // One fi_writemsg/fi_readmsg over several stretches: the iovecs are
  // owned by the attempt, which may run later (deferred on FI_EAGAIN).
  template <class Call>
  void post_stretches(const char* call, PeerAddr peer, std::span<const Stretch> stretches, RemoteRegion region,
                      Completion* done, Call&& issue) {
    check_stretch_count(call, stretches.size(), max_stretches_);
    auto* ctx = rma_context(done);
    std::vector<iovec> iov;
    std::vector<fi_rma_iov> rma;
    for (const Stretch& st : stretches) {
      iov.push_back({st.local, st.bytes});
      rma.push_back({region.addr + st.offset, st.bytes, region.key});
    }
    post(call, [=, iov = std::move(iov), rma = std::move(rma)] {
      fi_msg_rma msg{};
      msg.msg_iov = iov.data();
      msg.iov_count = iov.size();
      msg.addr = peer;
      msg.rma_iov = rma.data();
      msg.rma_iov_count = rma.size();
      msg.context = ctx;
      return issue(msg);
    });
  }

  // A receive never waits behind deferred sends: a send deferred because
  // the peer's queue is full waits for the peer to take messages, which
  // shm does only into posted receives, while the peer's own sends may wait
  // for ours (both sides' receives used up, each side's reposts behind its
  // sends: a deadlock, seen with a few thousand software atomics in flight).
  void post_receive(MessageContext* ctx) {
    std::lock_guard lk(fi_mutex_);
    if (deferred_receives_.empty() && try_receive(ctx)) return;
    deferred_receives_.push_back(ctx);
    any_deferred_.store(true, std::memory_order_relaxed);
  }
  // fi_recv; false when the provider says FI_EAGAIN. Called under fi_mutex_.
  bool try_receive(MessageContext* ctx) {
    const ssize_t ret = fi_recv(ep_, ctx->payload.data(), ctx->payload.size(), nullptr, FI_ADDR_UNSPEC, ctx);
    if (ret == -FI_EAGAIN) return false;
    if (ret != 0) fail("fi_recv", ret);
    return true;
  }

  void dispatch(OpContext* ctx, std::size_t len, const char* error) {
    if (!ctx) return;
    switch (ctx->kind) {
      case OpContext::Rma:
        static_cast<RmaContext*>(ctx)->done->complete(error);  // it owns the context's room
        break;
      case OpContext::Send:
        // A failed control message cannot be attributed to an operation;
        // the peer is gone or the fabric is broken.
        if (error) raise(ErrorCategory::Transport, std::string("fi_send completion: ") + error);
        delete static_cast<MessageContext*>(ctx);
        break;
      case OpContext::Receive:
        if (error) break;  // canceled at shutdown; receives_ owns the buffer
        deliver(static_cast<MessageContext*>(ctx)->payload.data(), len);
        post_receive(static_cast<MessageContext*>(ctx));
        break;
    }
  }

  // Hands messages to the handler in each sender's send order. Runs only in
  // the (single) dispatching thread, so the inboxes need no lock.
  void deliver(const std::byte* data, std::size_t len) {
    if (len < sizeof(Envelope)) raise(ErrorCategory::Internal, "message without envelope");
    Envelope env;
    std::memcpy(&env, data, sizeof env);
    Inbox& inbox = inboxes_[env.sender];
    if (env.seq != inbox.next) {
      inbox.early.emplace(env.seq, std::vector<std::byte>(data + sizeof env, data + len));
      return;
    }
    if (handler_) handler_(data + sizeof env, len - sizeof env);
    ++inbox.next;
    for (auto it = inbox.early.find(inbox.next); it != inbox.early.end();
         it = inbox.early.find(inbox.next)) {
      if (handler_) handler_(it->second.data(), it->second.size());
      inbox.early.erase(it);
      ++inbox.next;
    }
  }

  struct Envelope {
    std::uint64_t sender;
    std::uint64_t seq;
  };
  struct Inbox {
    std::uint64_t next = 0;
    std::map<std::uint64_t, std::vector<std::byte>> early;
  };

  fi_info* info_ = nullptr;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_av* av_ = nullptr;
  fid_cq* cq_ = nullptr;
  fid_ep* ep_ = nullptr;
  std::string provider_;
  std::size_t inject_size_ = 0;
  std::size_t max_stretches_ = 1;
  std::size_t max_atomic_stretches_ = 1;
  bool atomics_ = false;
  std::string no_native_;  // why native atomics are unavailable, if they are
  AtomicOrder order_;
  std::size_t max_message_ = 0;
  std::uint64_t next_key_ = 1;
  std::unordered_map<std::string, fi_addr_t> peers_;
  MessageHandler handler_;
  mutable std::mutex fi_mutex_;  // serialises every fi_* call
  std::mutex progress_mutex_;  // one dispatcher at a time keeps message order
  std::deque<Deferred> deferred_;  // guarded by fi_mutex_
  std::deque<MessageContext*> deferred_receives_;  // receives the provider refused for now; under fi_mutex_
  std::atomic<bool> any_deferred_{false};  // either queue non-empty, written under fi_mutex_, read without
  std::vector<std::unique_ptr<MessageContext>> receives_;  // posted receive buffers
  const std::uint64_t sender_id_ = std::random_device{}() ^ (std::uint64_t(::getpid()) << 32);
  std::unordered_map<PeerAddr, std::uint64_t> next_seq_;  // guarded by fi_mutex_
  std::unordered_map<std::uint64_t, Inbox> inboxes_;
};

}  // namespace

std::unique_ptr<Transport> open_fabric_transport(const std::string& provider, bool loopback) {
  return std::make_unique<FabricTransport>(provider, loopback);
}

}  // namespace onesided::detail
