// Window: origin-side bookkeeping (epochs, bounds, completion counting) and
// the target-side handlers (software atomics, the window lock). All data
// movement goes through the Transport seam; nothing here calls fi_*.
#include "onesided/window.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "endpoint.hpp"
#include "epoch.hpp"
#include "kernels.hpp"
#include "lock_table.hpp"
#include "onesided/error.hpp"
#include "protocol.hpp"

namespace onesided {

using detail::Header;
using detail::MsgKind;

namespace {

// Fixed-layout records exchanged through Bootstrap::allgather.
template <class T>
void pack(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
void pack_str(std::string& out, const std::string& s) {
  pack(out, static_cast<std::uint32_t>(s.size()));
  out += s;
}
struct Reader {
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

std::string hostname() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

// MPI's standard window hints are accepted: onesided always gives the
// strongest semantics they could ask for (every accumulate-style op atomic
// with every other, strict accumulate ordering), so each is satisfied.
// Anything else is most likely a typo, which a silent ignore would hide.
constexpr std::string_view kStandardKeys[] = {
    "no_locks", "accumulate_ordering", "accumulate_ops", "same_size", "same_disp_unit",
    "alloc_shared_noncontig", "mpi_accumulate_granularity", "which_accumulate_ops"};

void check_info_key(const std::string& key) {
  if (key == "provider" || key.rfind("mpi_", 0) == 0) return;
  for (auto k : kStandardKeys)
    if (key == k) return;
  std::string known = "provider";
  for (auto k : kStandardKeys) known += std::string(", ") + std::string(k);
  raise(ErrorCategory::Argument, "unknown window info key '" + key + "' (known: " + known + ")");
}

const char* op_name(Op op) { return op_info(op).name.data(); }
const char* dtype_name(Dtype d) { return dtype_info(d).name.data(); }

}  // namespace

class Window::Impl final : public detail::MessageSink {
 public:
  struct Peer {
    detail::PeerAddr addr = 0;
    std::uint32_t window = 0;
    detail::RemoteRegion region;
    std::uint64_t size = 0;
    std::int32_t disp_unit = 1;
  };

  Impl(void* base, std::size_t size, int disp_unit, const Info& info,
       std::shared_ptr<Bootstrap> group, Flavor flavor, std::unique_ptr<std::byte[]> owned)
      : group_(std::move(group)),
        rank_(group_->rank()),
        nranks_(group_->size()),
        base_(static_cast<std::byte*>(base)),
        size_(size),
        disp_unit_(disp_unit),
        flavor_(flavor),
        owned_(std::move(owned)),
        epochs_(nranks_),
        targets_(new TargetCounters[static_cast<std::size_t>(nranks_)]),
        lock_tokens_(static_cast<std::size_t>(nranks_), 0),
        nocheck_(static_cast<std::size_t>(nranks_), false) {
    if (disp_unit <= 0) raise(ErrorCategory::Argument, "disp_unit must be positive");
    if (size > 0 && base == nullptr) raise(ErrorCategory::Argument, "window base is null");
    for (const auto& [key, value] : info) check_info_key(key);
    setup(info.count("provider") ? info.at("provider") : std::string());
  }

  ~Impl() { release(); }

  // ---- creation ------------------------------------------------------------

  void setup(const std::string& requested) {
    // Round 1: agree on the provider. Every rank decides from the same
    // gathered data, so every rank decides the same way.
    std::string mine;
    pack_str(mine, hostname());
    pack_str(mine, requested);
    auto all = group_->allgather(mine);
    bool same_host = true;
    std::string host0, req0;
    for (int r = 0; r < nranks_; ++r) {
      Reader rd{all[r]};
      std::string host = rd.str(), req = rd.str();
      if (r == 0) {
        host0 = host;
        req0 = req;
      }
      same_host = same_host && host == host0;
      if (req != req0)
        raise(ErrorCategory::Argument, "info key 'provider' differs between ranks: rank 0 asks '" +
                                           req0 + "', rank " + std::to_string(r) + " asks '" + req + "'");
    }
    std::string provider = req0;
    if (provider.empty() && !std::getenv("FI_PROVIDER")) provider = same_host ? "shm" : "tcp;ofi_rxm";

    // Round 2: open the endpoint and expose the memory, then exchange the
    // result; a failure at any rank is raised at every rank.
    std::string status, address;
    detail::RemoteRegion region;
    try {
      endpoint_ = detail::Endpoint::get(provider, same_host);
      region_ = endpoint_->transport().register_region(base_, size_);
      region = region_->remote();
      address = endpoint_->transport().address();
      id_ = endpoint_->attach(this);
      provider_ = endpoint_->transport().provider();
    } catch (const Error& e) {
      status = e.what();
    }
    mine.clear();
    pack_str(mine, status);
    pack_str(mine, provider_);
    pack_str(mine, address);
    pack(mine, id_);
    pack(mine, region.addr);
    pack(mine, region.key);
    pack(mine, static_cast<std::uint64_t>(size_));
    pack(mine, static_cast<std::int32_t>(disp_unit_));
    all = group_->allgather(mine);
    peers_.resize(static_cast<std::size_t>(nranks_));
    std::string failures;
    for (int r = 0; r < nranks_; ++r) {
      Reader rd{all[r]};
      std::string st = rd.str(), prov = rd.str(), addr = rd.str();
      Peer& p = peers_[r];
      p.window = rd.get<std::uint32_t>();
      p.region.addr = rd.get<std::uint64_t>();
      p.region.key = rd.get<std::uint64_t>();
      p.size = rd.get<std::uint64_t>();
      p.disp_unit = rd.get<std::int32_t>();
      if (!st.empty()) {
        failures += " rank " + std::to_string(r) + ": " + st + ";";
        continue;
      }
      if (prov != provider_ && status.empty())
        failures += " rank " + std::to_string(r) + " opened provider '" + prov + "' but rank " +
                    std::to_string(rank_) + " opened '" + provider_ + "';";
      if (r != rank_ && status.empty()) p.addr = endpoint_->transport().insert_peer(addr);
    }
    if (!failures.empty()) {
      release();
      raise(ErrorCategory::Transport, "window creation failed:" + failures);
    }
    // No rank may target this window before every rank has filled in its
    // peer table: the handlers read it.
    group_->barrier();
  }

  // Local teardown, safe to call twice.
  void release() {
    if (freed_.exchange(true)) return;
    if (endpoint_ && id_) endpoint_->detach(id_);
    region_.reset();
  }

  // ---- validation ----------------------------------------------------------

  void check_live() const {
    if (freed_) raise(ErrorCategory::Epoch, "the window has been freed");
  }

  void check_rank(int target) const {
    if (target < 0 || target >= nranks_)
      raise(ErrorCategory::Argument, "target rank " + std::to_string(target) +
                                         " is not in the window's group of size " +
                                         std::to_string(nranks_));
  }

  // Byte offset of a target range, after checking it lies inside the
  // target's window. Overflow-safe for any disp and count.
  std::uint64_t target_offset(int target, std::int64_t disp, std::size_t bytes) const {
    const Peer& p = peers_[target];
    const auto limit = static_cast<unsigned __int128>(p.size);
    const auto off = static_cast<__int128>(disp) * p.disp_unit;
    if (disp < 0 || static_cast<unsigned __int128>(off) + bytes > limit)
      raise(ErrorCategory::Bounds,
            "target range out of window: displacement " + std::to_string(disp) + " x disp_unit " +
                std::to_string(p.disp_unit) + " + " + std::to_string(bytes) +
                " bytes exceeds the " + std::to_string(p.size) + "-byte window of rank " +
                std::to_string(target));
    return static_cast<std::uint64_t>(off);
  }

  void access(int target) {
    check_live();
    check_rank(target);
    std::lock_guard lk(epoch_mutex_);
    epochs_.check_access(target);
  }

  // ---- completion ----------------------------------------------------------

  struct TargetCounters {
    std::atomic<std::uint64_t> issued{0};
    std::atomic<std::uint64_t> completed{0};
  };

  void op_done(int target, const char* error) {
    if (error) {
      std::lock_guard lk(error_mutex_);
      if (first_error_.empty()) first_error_ = error;
      failed_ = true;
    }
    targets_[target].completed.fetch_add(1, std::memory_order_release);
  }

  struct RmaDone final : detail::Completion {
    Impl* window;
    int target;
    RmaDone(Impl* w, int t) : window(w), target(t) {}
    void complete(const char* error) override {
      window->op_done(target, error);
      delete this;
    }
  };

  struct PendingAtomic {
    int target;
    void* result;
    std::size_t bytes;
  };

  void raise_if_failed() {
    if (!failed_) return;
    std::lock_guard lk(error_mutex_);
    std::string e = first_error_;
    first_error_.clear();
    failed_ = false;
    raise(ErrorCategory::Transport, "an RMA operation failed: " + e);
  }

  void flush(int target) {
    check_live();
    check_rank(target);
    if (target != rank_) {
      auto& t = targets_[target];
      const auto goal = t.issued.load(std::memory_order_acquire);
      endpoint_->progress().wait(
          [&] { return t.completed.load(std::memory_order_acquire) >= goal; });
    }
    raise_if_failed();
  }

  void flush_all() {
    check_live();
    std::vector<std::uint64_t> goals(static_cast<std::size_t>(nranks_));
    for (int r = 0; r < nranks_; ++r) goals[r] = targets_[r].issued.load(std::memory_order_acquire);
    endpoint_->progress().wait([&] {
      for (int r = 0; r < nranks_; ++r)
        if (targets_[r].completed.load(std::memory_order_acquire) < goals[r]) return false;
      return true;
    });
    raise_if_failed();
  }

  // ---- operations ----------------------------------------------------------

  void put(const void* origin, std::size_t count, Dtype dtype, int target, std::int64_t disp) {
    access(target);
    const std::size_t bytes = count * dtype_info(dtype).size;
    const auto off = target_offset(target, disp, bytes);
    if (bytes == 0) return;
    if (target == rank_) {
      std::memmove(base_ + off, origin, bytes);
      return;
    }
    targets_[target].issued.fetch_add(1, std::memory_order_relaxed);
    const Peer& p = peers_[target];
    endpoint_->transport().write(p.addr, origin, bytes, p.region, off, new RmaDone(this, target));
  }

  void get(void* result, std::size_t count, Dtype dtype, int target, std::int64_t disp) {
    access(target);
    const std::size_t bytes = count * dtype_info(dtype).size;
    const auto off = target_offset(target, disp, bytes);
    if (bytes == 0) return;
    if (target == rank_) {
      std::memmove(result, base_ + off, bytes);
      return;
    }
    targets_[target].issued.fetch_add(1, std::memory_order_relaxed);
    const Peer& p = peers_[target];
    endpoint_->transport().read(p.addr, result, bytes, p.region, off, new RmaDone(this, target));
  }

  void rmw(Op op, const void* origin, const void* origin2, void* result, std::size_t count,
           Dtype dtype, int target, std::int64_t disp) {
    if (!op_applies(op, dtype))
      raise(ErrorCategory::Unsupported, std::string("op ") + op_name(op) +
                                            " is not defined for dtype " + dtype_name(dtype));
    const int operands = op_info(op).operands;
    if ((operands >= 1 && !origin && count) || (operands >= 2 && !origin2 && count))
      raise(ErrorCategory::Argument, std::string("op ") + op_name(op) + " needs " +
                                         std::to_string(operands) + " origin operand(s)");
    access(target);
    const std::size_t esize = dtype_info(dtype).size;
    const auto off = target_offset(target, disp, count * esize);
    if (count == 0) return;

    if (target == rank_) {
      std::lock_guard lk(atomic_mutex_);
      kernels::apply(op, dtype, base_ + off, origin, origin2, result, count);
      return;
    }
    // Software path: the target applies the op in its progress engine. Large
    // vectors travel in several messages; atomicity is per element, and the
    // messages arrive in order, so ordering still holds.
    const std::size_t payload_per_elem = esize * static_cast<std::size_t>(std::max(operands, 1));
    const std::size_t room = endpoint_->transport().max_message_size() - sizeof(Header);
    const std::size_t chunk = std::max<std::size_t>(1, room / payload_per_elem);
    const Peer& p = peers_[target];
    std::vector<std::byte> msg;
    for (std::size_t first = 0; first < count; first += chunk) {
      const std::size_t n = std::min(chunk, count - first);
      const std::size_t nbytes = n * esize;
      Header h{};
      h.kind = MsgKind::Atomic;
      h.op = op;
      h.dtype = dtype;
      h.flags = result ? detail::kFetch : 0;
      h.window = p.window;
      h.origin = static_cast<std::uint32_t>(rank_);
      h.count = static_cast<std::uint32_t>(n);
      h.offset = off + first * esize;
      auto* pending = new PendingAtomic{target, result ? static_cast<std::byte*>(result) + first * esize : nullptr, nbytes};
      h.token = reinterpret_cast<std::uint64_t>(pending);
      msg.resize(sizeof h + nbytes * static_cast<std::size_t>(operands));
      std::memcpy(msg.data(), &h, sizeof h);
      if (operands >= 1) std::memcpy(msg.data() + sizeof h, static_cast<const std::byte*>(origin) + first * esize, nbytes);
      if (operands >= 2) std::memcpy(msg.data() + sizeof h + nbytes, static_cast<const std::byte*>(origin2) + first * esize, nbytes);
      targets_[target].issued.fetch_add(1, std::memory_order_relaxed);
      try {
        endpoint_->transport().send(p.addr, msg.data(), msg.size());
      } catch (...) {
        targets_[target].issued.fetch_sub(1, std::memory_order_relaxed);
        delete pending;
        throw;
      }
    }
  }

  // ---- synchronisation -----------------------------------------------------

  void fence(unsigned assertion) {
    check_live();
    {
      std::lock_guard lk(epoch_mutex_);
      epochs_.on_fence(assertion);
    }
    flush_all();
    group_->barrier();
  }

  void lock(int target, LockType type, unsigned assertion) {
    check_live();
    check_rank(target);
    {
      std::lock_guard lk(epoch_mutex_);
      epochs_.on_lock(target);
      nocheck_[target] = (assertion & mode::kNoCheck) != 0;
    }
    if (!nocheck_[target]) acquire(target, type == LockType::Exclusive);
  }

  void unlock(int target) {
    check_live();
    check_rank(target);
    {
      std::lock_guard lk(epoch_mutex_);
      epochs_.on_unlock(target);
    }
    flush(target);
    if (!nocheck_[target]) release_lock(target);
  }

  void lock_all(unsigned assertion) {
    check_live();
    {
      std::lock_guard lk(epoch_mutex_);
      epochs_.on_lock_all();
      lock_all_nocheck_ = (assertion & mode::kNoCheck) != 0;
    }
    if (lock_all_nocheck_) return;
    // Ask every target at once, then wait for all grants.
    std::vector<std::atomic<int>> flags(static_cast<std::size_t>(nranks_));
    for (int r = 0; r < nranks_; ++r) request_lock(r, false, &flags[r]);
    endpoint_->progress().wait([&] {
      for (auto& f : flags)
        if (f.load(std::memory_order_acquire) == 0) return false;
      return true;
    });
  }

  void unlock_all() {
    check_live();
    {
      std::lock_guard lk(epoch_mutex_);
      epochs_.on_unlock_all();
    }
    flush_all();
    if (lock_all_nocheck_) return;
    std::vector<std::atomic<int>> flags(static_cast<std::size_t>(nranks_));
    for (int r = 0; r < nranks_; ++r) request_unlock(r, &flags[r]);
    endpoint_->progress().wait([&] {
      for (auto& f : flags)
        if (f.load(std::memory_order_acquire) == 0) return false;
      return true;
    });
  }

  void free() {
    check_live();
    {
      std::lock_guard lk(epoch_mutex_);
      epochs_.check_free();
    }
    flush_all();
    // Nobody may still target this rank's memory once it is released.
    group_->barrier();
    release();
  }

  // ---- the window lock -----------------------------------------------------

  void acquire(int target, bool exclusive) {
    std::atomic<int> flag{0};
    request_lock(target, exclusive, &flag);
    endpoint_->progress().wait([&] { return flag.load(std::memory_order_acquire) != 0; });
  }

  void release_lock(int target) {
    std::atomic<int> flag{0};
    request_unlock(target, &flag);
    endpoint_->progress().wait([&] { return flag.load(std::memory_order_acquire) != 0; });
  }

  void request_lock(int target, bool exclusive, std::atomic<int>* flag) {
    const auto token = reinterpret_cast<std::uint64_t>(flag);
    if (target == rank_) {
      std::lock_guard lk(lock_mutex_);
      if (locks_.acquire(rank_, exclusive))
        flag->store(1, std::memory_order_release);
      else
        lock_tokens_[rank_] = token;
      return;
    }
    send_control(target, MsgKind::Lock, exclusive ? detail::kExclusive : 0, token);
  }

  void request_unlock(int target, std::atomic<int>* flag) {
    if (target == rank_) {
      unlock_local(rank_);
      flag->store(1, std::memory_order_release);
      return;
    }
    send_control(target, MsgKind::Unlock, 0, reinterpret_cast<std::uint64_t>(flag));
  }

  void send_control(int target, MsgKind kind, std::uint8_t flags, std::uint64_t token) {
    Header h{};
    h.kind = kind;
    h.flags = flags;
    h.window = peers_[target].window;
    h.origin = static_cast<std::uint32_t>(rank_);
    h.token = token;
    endpoint_->transport().send(peers_[target].addr, &h, sizeof h);
  }

  // Releases origin's hold on this rank's window lock and tells the newly
  // granted origins.
  void unlock_local(int origin) {
    std::vector<std::pair<int, std::uint64_t>> grants;
    {
      std::lock_guard lk(lock_mutex_);
      for (int o : locks_.release(origin)) grants.emplace_back(o, lock_tokens_[o]);
    }
    for (auto [o, token] : grants) grant(o, token);
  }

  void grant(int origin, std::uint64_t token) {
    if (origin == rank_)
      reinterpret_cast<std::atomic<int>*>(token)->store(1, std::memory_order_release);
    else
      send_control(origin, MsgKind::LockGranted, 0, token);
  }

  // ---- target side ---------------------------------------------------------

  void on_message(const Header& h, const std::byte* payload, std::size_t len) override {
    const int origin = static_cast<int>(h.origin);
    if (origin < 0 || origin >= nranks_) return;  // not from this group: ignore
    switch (h.kind) {
      case MsgKind::Atomic:
        return apply_atomic(h, payload, len);
      case MsgKind::AtomicDone: {
        auto* p = reinterpret_cast<PendingAtomic*>(h.token);
        const bool failed = h.flags & detail::kFailed;
        if (!failed && p->result) std::memcpy(p->result, payload, std::min(len, p->bytes));
        std::string reason(reinterpret_cast<const char*>(payload), failed ? len : 0);
        op_done(p->target, failed ? reason.c_str() : nullptr);
        delete p;
        return;
      }
      case MsgKind::Lock: {
        endpoint_->progress().expect_traffic(+1);
        bool granted;
        {
          std::lock_guard lk(lock_mutex_);
          granted = locks_.acquire(origin, h.flags & detail::kExclusive);
          if (!granted) lock_tokens_[origin] = h.token;
        }
        if (granted) grant(origin, h.token);
        return;
      }
      case MsgKind::Unlock:
        endpoint_->progress().expect_traffic(-1);
        unlock_local(origin);
        send_control(origin, MsgKind::UnlockDone, 0, h.token);
        return;
      case MsgKind::LockGranted:
      case MsgKind::UnlockDone:
        reinterpret_cast<std::atomic<int>*>(h.token)->store(1, std::memory_order_release);
        return;
    }
  }

  void apply_atomic(const Header& h, const std::byte* payload, std::size_t len) {
    const std::size_t esize = dtype_info(h.dtype).size;
    const std::size_t bytes = std::size_t{h.count} * esize;
    const int operands = op_info(h.op).operands;
    std::vector<std::byte> reply(sizeof(Header) + ((h.flags & detail::kFetch) ? bytes : 0));
    Header r{};
    r.kind = MsgKind::AtomicDone;
    r.window = peers_[h.origin].window;
    r.origin = static_cast<std::uint32_t>(rank_);
    r.token = h.token;
    // The origin checked all of this; checking again keeps a corrupted or
    // malicious message from writing outside the window.
    std::string error;
    if (h.offset > size_ || bytes > size_ - h.offset)
      error = "target range outside the window (checked at the target)";
    else if (len < bytes * static_cast<std::size_t>(operands) || !op_applies(h.op, h.dtype))
      error = "malformed atomic request";
    if (error.empty()) {
      std::lock_guard lk(atomic_mutex_);
      kernels::apply(h.op, h.dtype, base_ + h.offset, payload, payload + bytes,
                     (h.flags & detail::kFetch) ? reply.data() + sizeof(Header) : nullptr, h.count);
    } else {
      r.flags = detail::kFailed;
      reply.resize(sizeof(Header));
      reply.insert(reply.end(), reinterpret_cast<const std::byte*>(error.data()),
                   reinterpret_cast<const std::byte*>(error.data() + error.size()));
    }
    std::memcpy(reply.data(), &r, sizeof r);
    endpoint_->transport().send(peers_[h.origin].addr, reply.data(), reply.size());
  }

  // ---- state ---------------------------------------------------------------

  std::shared_ptr<Bootstrap> group_;
  int rank_;
  int nranks_;
  std::byte* base_;
  std::size_t size_;
  int disp_unit_;
  Flavor flavor_;
  std::unique_ptr<std::byte[]> owned_;
  std::string provider_;
  std::shared_ptr<detail::Endpoint> endpoint_;
  std::unique_ptr<detail::LocalRegion> region_;
  std::uint32_t id_ = 0;
  std::vector<Peer> peers_;
  std::atomic<bool> freed_{false};

  std::mutex epoch_mutex_;
  detail::EpochState epochs_;
  std::unique_ptr<TargetCounters[]> targets_;
  std::mutex error_mutex_;
  std::atomic<bool> failed_{false};
  std::string first_error_;

  // Target side: software atomics are serialised per window.
  std::mutex atomic_mutex_;
  std::mutex lock_mutex_;
  detail::LockTable locks_;
  std::vector<std::uint64_t> lock_tokens_;  // origin -> token of its queued lock request
  std::vector<bool> nocheck_;               // target locked with MODE_NOCHECK
  bool lock_all_nocheck_ = false;
};

// ---- Window forwarding -------------------------------------------------------

Window::Window(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Window::~Window() = default;

std::unique_ptr<Window> Window::create(void* base, std::size_t size, int disp_unit,
                                       const Info& info, std::shared_ptr<Bootstrap> group,
                                       Flavor flavor) {
  if (!group) raise(ErrorCategory::Argument, "a window needs a group (Bootstrap)");
  return std::unique_ptr<Window>(
      new Window(std::make_unique<Impl>(base, size, disp_unit, info, std::move(group), flavor, nullptr)));
}

std::unique_ptr<Window> Window::allocate(std::size_t size, int disp_unit, const Info& info,
                                         std::shared_ptr<Bootstrap> group) {
  if (!group) raise(ErrorCategory::Argument, "a window needs a group (Bootstrap)");
  auto memory = std::make_unique<std::byte[]>(std::max<std::size_t>(size, 1));
  void* base = memory.get();
  return std::unique_ptr<Window>(new Window(std::make_unique<Impl>(
      base, size, disp_unit, info, std::move(group), Flavor::Allocate, std::move(memory))));
}

void* Window::base() const { return impl_->base_; }
std::size_t Window::size() const { return impl_->size_; }
int Window::disp_unit() const { return impl_->disp_unit_; }
int Window::rank() const { return impl_->rank_; }
int Window::group_size() const { return impl_->nranks_; }
Flavor Window::flavor() const { return impl_->flavor_; }
// Every provider onesided opens writes straight into the exposed memory
// (there is no separate public copy), so loads see RMA updates without
// extra calls once the epoch that completes them is over.
Model Window::model() const { return Model::Unified; }
const std::string& Window::provider() const { return impl_->provider_; }
std::size_t Window::size_of(int target) const {
  impl_->check_rank(target);
  return impl_->peers_[target].size;
}
int Window::disp_unit_of(int target) const {
  impl_->check_rank(target);
  return impl_->peers_[target].disp_unit;
}

Info Window::info() const {
  return Info{
      {"provider", impl_->provider_},
      {"accumulate_ordering", "rar,raw,war,waw"},
      {"accumulate_ops", "any"},
      {"atomics", "software"},
      {"memory_model", "unified"},
  };
}

void Window::put(const void* origin, std::size_t count, Dtype dtype, int target, std::int64_t disp) {
  impl_->put(origin, count, dtype, target, disp);
}
void Window::get(void* result, std::size_t count, Dtype dtype, int target, std::int64_t disp) {
  impl_->get(result, count, dtype, target, disp);
}
void Window::rmw(Op op, const void* origin, const void* origin2, void* result, std::size_t count,
                 Dtype dtype, int target, std::int64_t disp) {
  impl_->rmw(op, origin, origin2, result, count, dtype, target, disp);
}

namespace {
void check_accumulate_op(Op op, bool fetching) {
  const bool ok = op_info(op).operands == 1 || (fetching && op == Op::NoOp);
  if (!ok)
    raise(ErrorCategory::Argument,
          std::string("op ") + op_name(op) + " is not valid for " +
              (fetching ? "Get_accumulate/Fetch_and_op" : "Accumulate") +
              (op == Op::NoOp ? " (NO_OP only reads: use Get_accumulate)" : " (use Rmw/Rmw2)"));
}
}  // namespace

void Window::accumulate(const void* origin, std::size_t count, Dtype dtype, int target,
                        std::int64_t disp, Op op) {
  check_accumulate_op(op, false);
  impl_->rmw(op, origin, nullptr, nullptr, count, dtype, target, disp);
}
void Window::get_accumulate(const void* origin, void* result, std::size_t count, Dtype dtype,
                            int target, std::int64_t disp, Op op) {
  check_accumulate_op(op, true);
  impl_->rmw(op, origin, nullptr, result, count, dtype, target, disp);
}
void Window::fetch_and_op(const void* origin, void* result, Dtype dtype, int target,
                          std::int64_t disp, Op op) {
  get_accumulate(origin, result, 1, dtype, target, disp, op);
}
void Window::compare_and_swap(const void* origin, const void* compare, void* result, Dtype dtype,
                              int target, std::int64_t disp) {
  // MPI's origin is the value swapped in and compare the comperand; the
  // generalised form takes (comperand, swaperand).
  impl_->rmw(Op::CswapEq, compare, origin, result, 1, dtype, target, disp);
}

void Window::fence(unsigned assertion) { impl_->fence(assertion); }
void Window::lock(int target, LockType type, unsigned assertion) { impl_->lock(target, type, assertion); }
void Window::unlock(int target) { impl_->unlock(target); }
void Window::lock_all(unsigned assertion) { impl_->lock_all(assertion); }
void Window::unlock_all() { impl_->unlock_all(); }
void Window::flush(int target) { impl_->flush(target); }
void Window::flush_all() { impl_->flush_all(); }
// Local completion is implied by remote completion, which is what we track.
void Window::flush_local(int target) { impl_->flush(target); }
void Window::flush_local_all() { impl_->flush_all(); }
void Window::sync() { std::atomic_thread_fence(std::memory_order_seq_cst); }
void Window::free() { impl_->free(); }

}  // namespace onesided
