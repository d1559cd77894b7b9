// Window: origin-side bookkeeping (epochs, bounds, completion counting) and
// the target-side handlers (software atomics, the window lock). All data
// movement goes through the Transport seam; nothing here calls fi_*.
#include "onesided/window.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "atomic_plan.hpp"
#include "endpoint.hpp"
#include "epoch.hpp"
#include "in_flight.hpp"
#include "kernels.hpp"
#include "lock_table.hpp"
#include "onesided/error.hpp"
#include "op_set.hpp"
#include "ordering.hpp"
#include "protocol.hpp"
#include "request_state.hpp"

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
  if (key == "provider" || key == "onesided_atomics" || key.rfind("mpi_", 0) == 0) return;
  for (auto k : kStandardKeys)
    if (key == k) return;
  std::string known = "provider, onesided_atomics";
  for (auto k : kStandardKeys) known += std::string(", ") + std::string(k);
  raise(ErrorCategory::Argument, "unknown window info key '" + key + "' (known: " + known + ")");
}

// The value 1 of every dtype, as bytes (INC's native form adds ones).
struct Ones {
  std::array<std::array<std::byte, 32>, kNumDtypes> bytes{};
  Ones() {
    for (const auto& d : kDtypes)
      visit_dtype(d.id, [&](auto tag) {
        const decltype(tag) one(1);
        std::memcpy(bytes[static_cast<std::size_t>(d.id)].data(), &one, sizeof one);
      });
  }
  const std::byte* at(Dtype d) const { return bytes[static_cast<std::size_t>(d)].data(); }
};
const Ones kOne;

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
        in_flight_(nranks_),
        lock_tokens_(static_cast<std::size_t>(nranks_), 0),
        nocheck_(static_cast<std::size_t>(nranks_), 0) {
    if (disp_unit <= 0) raise(ErrorCategory::Argument, "disp_unit must be positive");
    if (size > 0 && base == nullptr) raise(ErrorCategory::Argument, "window base is null");
    for (const auto& [key, value] : info) check_info_key(key);
    auto value = [&](const char* key) { return info.count(key) ? info.at(key) : std::string(); };
    // MPICH spells the op list which_accumulate_ops; both mean the same.
    std::string ops = value("accumulate_ops"), which = value("which_accumulate_ops");
    if (!ops.empty() && !which.empty() && ops != which)
      raise(ErrorCategory::Argument, "accumulate_ops and which_accumulate_ops disagree");
    declared_ = detail::OpSet::parse(ops.empty() ? which : ops);
    if (info.count("accumulate_ordering")) ordering_ = detail::Ordering::parse(info.at("accumulate_ordering"));
    const std::string atomics = value("onesided_atomics");
    if (atomics == "software")
      software_only_ = "software requested (info onesided_atomics=software)";
    else if (!atomics.empty() && atomics != "auto")
      raise(ErrorCategory::Argument, "onesided_atomics must be auto or software, not '" + atomics + "'");
    setup(value("provider"));
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
    detail::NativeTable native;
    try {
      endpoint_ = detail::Endpoint::get(provider, same_host);
      region_ = endpoint_->transport().register_region(base_, size_);
      region = region_->remote();
      address = endpoint_->transport().address();
      id_ = endpoint_->attach(this);
      provider_ = endpoint_->transport().provider();
      native = detail::NativeTable::probe(endpoint_->transport());
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
    pack_str(mine, declared_.str() + "|" + ordering_.str() + "|" + software_only_);
    pack_str(mine, native.bytes());
    all = group_->allgather(mine);
    detail::NativeTable everywhere = native;
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
      const std::string hints = rd.str();
      const std::string table = rd.str();
      if (!st.empty()) {
        failures += " rank " + std::to_string(r) + ": " + st + ";";
        continue;
      }
      if (prov != provider_ && status.empty())
        failures += " rank " + std::to_string(r) + " opened provider '" + prov + "' but rank " +
                    std::to_string(rank_) + " opened '" + provider_ + "';";
      const std::string my_hints = declared_.str() + "|" + ordering_.str() + "|" + software_only_;
      if (hints != my_hints && status.empty())
        failures += " rank " + std::to_string(r) + " asks accumulate_ops|accumulate_ordering|onesided_atomics '" +
                    hints + "', rank " + std::to_string(rank_) + " '" + my_hints + "';";
      if (!status.empty() || !failures.empty()) continue;
      everywhere.meet(detail::NativeTable::from_bytes(table));
      // This rank too: native atomics on its own memory go through the
      // provider, so they stay atomic with the ones arriving from elsewhere.
      p.addr = endpoint_->transport().insert_peer(addr);
    }
    if (!failures.empty()) {
      release();
      raise(ErrorCategory::Transport, "window creation failed:" + failures);
    }
    plan_ = detail::AtomicPlan(declared_, ordering_, native, everywhere,
                               endpoint_->transport().atomic_order(), provider_,
                               software_only_.empty() ? endpoint_->transport().native_unavailable()
                                                      : software_only_);
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

  void op_done(int target, detail::InFlight::Token token, const char* error,
               const std::shared_ptr<detail::RequestState>& request) {
    if (error) {
      std::lock_guard lk(error_mutex_);
      if (first_error_.empty()) first_error_ = error;
      failed_ = true;
    }
    if (request) request->complete(error);
    in_flight_.end(target, token);
  }

  // An operation in flight: registered with in_flight_ (and its request)
  // when made, ended exactly once: by complete() when the transport reports
  // it, or by abandon() when posting it failed (the caller got the error).
  struct InFlightOp : detail::Completion {
    Impl* window;
    int target;
    detail::InFlight::Token token;
    std::shared_ptr<detail::RequestState> request;
    InFlightOp(Impl* w, int t, std::shared_ptr<detail::RequestState> r)
        : window(w), target(t), token(w->in_flight_.begin(t)), request(std::move(r)) {
      if (request) request->pending.fetch_add(1, std::memory_order_relaxed);
    }
    virtual ~InFlightOp() = default;
    void complete(const char* error) override {
      window->op_done(target, token, error, request);
      delete this;
    }
    void abandon() {
      window->op_done(target, token, nullptr, request);
      delete this;
    }
  };

  struct RmaDone final : InFlightOp {
    std::shared_ptr<void> keep;  // memory the operation reads until it completes
    RmaDone(Impl* w, int t, std::shared_ptr<detail::RequestState> r = nullptr,
            std::shared_ptr<void> k = nullptr)
        : InFlightOp(w, t, std::move(r)), keep(std::move(k)) {}
  };

  // A software atomic: the reply's old values go to `result`.
  struct PendingAtomic final : InFlightOp {
    void* result;
    std::size_t bytes;
    PendingAtomic(Impl* w, int t, void* res, std::size_t n, std::shared_ptr<detail::RequestState> r)
        : InFlightOp(w, t, std::move(r)), result(res), bytes(n) {}
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
    // This rank too: its native atomics on its own memory go through the
    // provider (software ones and local puts complete at once and are not
    // counted).
    const auto cut = in_flight_.cut(target);
    endpoint_->progress().wait([&] { return in_flight_.drained(target, cut); });
    raise_if_failed();
  }

  void flush_all() {
    check_live();
    std::vector<detail::InFlight::Token> cuts(static_cast<std::size_t>(nranks_));
    for (int r = 0; r < nranks_; ++r) cuts[r] = in_flight_.cut(r);
    endpoint_->progress().wait([&] {
      for (int r = 0; r < nranks_; ++r)
        if (!in_flight_.drained(r, cuts[r])) return false;
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
    const Peer& p = peers_[target];
    submit(new RmaDone(this, target), [&](RmaDone* done) {
      endpoint_->transport().write(p.addr, origin, bytes, p.region, off, done);
    });
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
    const Peer& p = peers_[target];
    submit(new RmaDone(this, target), [&](RmaDone* done) {
      endpoint_->transport().read(p.addr, result, bytes, p.region, off, done);
    });
  }

  // Every accumulate-style call lands here. `f` is the calling function
  // (for the declared-op check and the native shape); operands follow the
  // kernels' convention (origin2 is the swap value of two-operand ops).
  void atomic(Function f, Op op, const void* origin, const void* origin2, void* result,
              std::size_t count, Dtype dtype, int target, std::int64_t disp,
              const std::shared_ptr<detail::RequestState>& request) {
    if (!op_applies(op, dtype))
      raise(ErrorCategory::Unsupported, std::string("op ") + op_name(op) +
                                            " is not defined for dtype " + dtype_name(dtype));
    if (!declared_.contains(f, op))
      raise(ErrorCategory::OpSet, std::string(function_name(f)) + ":" + op_name(op) +
                                      " is outside the window's declared accumulate_ops (" +
                                      declared_.str() + ")");
    const int operands = op_info(op).operands;
    if ((operands >= 1 && !origin && count) || (operands >= 2 && !origin2 && count))
      raise(ErrorCategory::Argument, std::string("op ") + op_name(op) + " needs " +
                                         std::to_string(operands) + " origin operand(s)");
    if ((f == Function::Rmw || f == Function::Rmw2) && count == 0)
      raise(ErrorCategory::Argument, "Rmw/Rmw2 need count >= 1");
    access(target);
    const std::size_t esize = dtype_info(dtype).size;
    const auto off = target_offset(target, disp, count * esize);
    if (count == 0) return;
    if (plan_.path(dtype).native)
      native_atomic(f, op, origin, origin2, result, count, dtype, target, off, request);
    else
      software_atomic(op, origin, origin2, result, count, dtype, target, off, request);
  }

  // The provider's atomics, for every rank including this one: a local
  // software update would not be atomic with the provider's.
  void native_atomic(Function f, Op op, const void* origin, const void* origin2, void* result,
                     std::size_t count, Dtype dtype, int target, std::uint64_t off,
                     const std::shared_ptr<detail::RequestState>& request) {
    const auto kind = detail::AtomicPlan::kind_of(f, op);
    const Op nop = detail::AtomicPlan::native_op(op);
    const std::size_t esize = dtype_info(dtype).size;
    const std::size_t chunk = plan_.chunk(f, op, dtype);
    // Memory the provider uses until completion: INC's ones (INC is SUM with
    // ones) and the scratch an accumulate fetches into.
    const std::size_t bytes = count * esize;
    const bool inc = op == Op::Inc, scratch = result == nullptr;
    std::shared_ptr<std::vector<std::byte>> keep;
    if (inc || scratch) keep = std::make_shared<std::vector<std::byte>>((inc + scratch) * bytes);
    if (inc) {
      for (std::size_t i = 0; i < count; ++i) std::memcpy(keep->data() + i * esize, kOne.at(dtype), esize);
      origin = keep->data();
    }
    if (scratch) result = keep->data() + (inc ? bytes : 0);
    auto at = [&](const void* p, std::size_t first) {
      return p ? static_cast<const std::byte*>(p) + first * esize : nullptr;
    };
    const Peer& p = peers_[target];
    for (std::size_t first = 0; first < count; first += chunk) {
      const std::size_t n = std::min(chunk, count - first);
      // libfabric's compare form takes (buf = value swapped in, compare =
      // comperand or mask); ours is (origin = comperand, origin2 = swap).
      const void* buf = kind == detail::AtomicKind::Compare ? at(origin2, first) : at(origin, first);
      const void* cmp = kind == detail::AtomicKind::Compare ? at(origin, first) : nullptr;
      void* res = result ? static_cast<std::byte*>(result) + first * esize : nullptr;
      submit(new RmaDone(this, target, request, keep), [&](RmaDone* done) {
        endpoint_->transport().atomic(p.addr, kind, nop, dtype, buf, cmp, res, n, p.region,
                                      off + first * esize, done);
      });
    }
  }

  void software_atomic(Op op, const void* origin, const void* origin2, void* result,
                       std::size_t count, Dtype dtype, int target, std::uint64_t off,
                       const std::shared_ptr<detail::RequestState>& request) {
    if (target == rank_) {
      std::lock_guard lk(atomic_mutex_);
      kernels::apply(op, dtype, base_ + off, origin, origin2, result, count);
      return;
    }
    // The target applies the op in its progress engine. Large vectors
    // travel in several messages; atomicity is per element, and the
    // messages arrive in order, so ordering still holds.
    const int operands = op_info(op).operands;
    const std::size_t esize = dtype_info(dtype).size;
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
      auto* pending = new PendingAtomic(
          this, target, result ? static_cast<std::byte*>(result) + first * esize : nullptr, nbytes, request);
      h.token = reinterpret_cast<std::uint64_t>(pending);
      msg.resize(sizeof h + nbytes * static_cast<std::size_t>(operands));
      std::memcpy(msg.data(), &h, sizeof h);
      if (operands >= 1)
        std::memcpy(msg.data() + sizeof h, static_cast<const std::byte*>(origin) + first * esize, nbytes);
      if (operands >= 2)
        std::memcpy(msg.data() + sizeof h + nbytes,
                    static_cast<const std::byte*>(origin2) + first * esize, nbytes);
      submit(pending, [&](PendingAtomic*) { endpoint_->transport().send(p.addr, msg.data(), msg.size()); });
    }
  }

  // Posts an operation whose bookkeeping `done` has begun; if posting
  // fails, ends it so no flush waits for it, and rethrows.
  template <class Done, class Post>
  void submit(Done* done, Post&& post) {
    try {
      post(done);
    } catch (...) {
      done->abandon();
      throw;
    }
  }

  // Seed 002's MODE_PASSIVE_EPOCH_IMPLICIT: the call is its own exclusive
  // epoch (no lock with MODE_NOCHECK) and has completed when it returns.
  template <class Op_>
  void maybe_implicit_epoch(int target, unsigned assertion, Op_&& op) {
    if (!(assertion & mode::kPassiveEpochImplicit)) return op();
    lock(target, LockType::Exclusive, assertion & mode::kNoCheck);
    try {
      op();
    } catch (...) {
      unlock(target);
      throw;
    }
    unlock(target);
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
    const bool nocheck = (assertion & mode::kNoCheck) != 0;
    {
      std::lock_guard lk(epoch_mutex_);
      epochs_.on_lock(target);
      nocheck_[target] = nocheck;
    }
    if (!nocheck) acquire(target, type == LockType::Exclusive);
  }

  void unlock(int target) {
    check_live();
    check_rank(target);
    bool nocheck;
    {
      std::lock_guard lk(epoch_mutex_);
      epochs_.on_unlock(target);
      nocheck = nocheck_[target];
    }
    flush(target);
    if (!nocheck) release_lock(target);
  }

  void lock_all(unsigned assertion) {
    check_live();
    const bool nocheck = (assertion & mode::kNoCheck) != 0;
    {
      std::lock_guard lk(epoch_mutex_);
      epochs_.on_lock_all();
      lock_all_nocheck_ = nocheck;
    }
    if (nocheck) return;
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
    bool nocheck;
    {
      std::lock_guard lk(epoch_mutex_);
      epochs_.on_unlock_all();
      nocheck = lock_all_nocheck_;
    }
    flush_all();
    if (nocheck) return;
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
        p->complete(failed ? reason.c_str() : nullptr);
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
    const bool known = static_cast<std::size_t>(h.op) < kNumOps && static_cast<std::size_t>(h.dtype) < kNumDtypes;
    const std::size_t esize = known ? dtype_info(h.dtype).size : 0;
    const std::size_t bytes = std::size_t{h.count} * esize;
    const int operands = known ? op_info(h.op).operands : 0;
    std::vector<std::byte> reply(sizeof(Header) + ((h.flags & detail::kFetch) ? bytes : 0));
    Header r{};
    r.kind = MsgKind::AtomicDone;
    r.window = peers_[h.origin].window;
    r.origin = static_cast<std::uint32_t>(rank_);
    r.token = h.token;
    // The origin checked all of this; checking again keeps a corrupted or
    // malicious message from writing outside the window.
    std::string error;
    if (!known || len < bytes * static_cast<std::size_t>(operands) || !op_applies(h.op, h.dtype))
      error = "malformed atomic request";
    else if (h.offset > size_ || bytes > size_ - h.offset)
      error = "target range outside the window (checked at the target)";
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
  detail::InFlight in_flight_;
  std::mutex error_mutex_;
  std::atomic<bool> failed_{false};
  std::string first_error_;

  // Target side: software atomics are serialised per window.
  std::mutex atomic_mutex_;
  std::mutex lock_mutex_;
  detail::LockTable locks_;
  std::vector<std::uint64_t> lock_tokens_;  // origin -> token of its queued lock request
  // Target locked with MODE_NOCHECK; guarded by epoch_mutex_ (bytes, not
  // vector<bool>, so threads locking different targets touch different memory).
  std::vector<std::uint8_t> nocheck_;
  detail::OpSet declared_ = detail::OpSet::all();
  detail::Ordering ordering_;
  detail::AtomicPlan plan_;
  std::string software_only_;  // non-empty: the window was asked not to go native
  bool lock_all_nocheck_ = false;  // guarded by epoch_mutex_
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
  int native = 0;
  for (const auto& d : kDtypes) native += impl_->plan_.path(d.id).native;
  return Info{
      {"provider", impl_->provider_},
      {"accumulate_ordering", impl_->ordering_.str()},
      {"accumulate_ops", impl_->declared_.str()},
      {"atomics", native == 0 ? "software"
                  : native == static_cast<int>(kNumDtypes) ? "native"
                                                           : "mixed (per dtype, see win.atomics)"},
      {"memory_model", "unified"},
  };
}

bool Window::native_atomics(Dtype dtype) const { return impl_->plan_.path(dtype).native; }
const std::string& Window::atomics_reason(Dtype dtype) const { return impl_->plan_.path(dtype).reason; }
std::size_t Window::native_count(Function f, Op op, Dtype dtype) const {
  return impl_->plan_.native_count(f, op, dtype);
}

void Window::put(const void* origin, std::size_t count, Dtype dtype, int target, std::int64_t disp) {
  impl_->put(origin, count, dtype, target, disp);
}
void Window::get(void* result, std::size_t count, Dtype dtype, int target, std::int64_t disp) {
  impl_->get(result, count, dtype, target, disp);
}

namespace {
// A misplaced op is a malformed call (an Argument error), before the
// declared-op check: MPI's names say where each op belongs.
void check_admits(Function f, Op op) {
  if (function_admits(f, op)) return;
  std::string hint = op == Op::NoOp ? " (NO_OP only reads: use get_accumulate or fetch_and_op)"
                     : op_info(op).operands == 2 ? " (use rmw2)"
                     : op == Op::Inc             ? " (use rmw)"
                                                 : "";
  raise(ErrorCategory::Argument,
        std::string("op ") + op_name(op) + " is not valid for " + std::string(function_name(f)) + hint);
}
}  // namespace

void Window::accumulate(const void* origin, std::size_t count, Dtype dtype, int target,
                        std::int64_t disp, Op op) {
  check_admits(Function::Accumulate, op);
  impl_->atomic(Function::Accumulate, op, origin, nullptr, nullptr, count, dtype, target, disp, nullptr);
}
void Window::get_accumulate(const void* origin, void* result, std::size_t count, Dtype dtype,
                            int target, std::int64_t disp, Op op) {
  check_admits(Function::GetAccumulate, op);
  impl_->atomic(Function::GetAccumulate, op, origin, nullptr, result, count, dtype, target, disp, nullptr);
}
void Window::fetch_and_op(const void* origin, void* result, Dtype dtype, int target,
                          std::int64_t disp, Op op) {
  check_admits(Function::FetchAndOp, op);
  impl_->atomic(Function::FetchAndOp, op, origin, nullptr, result, 1, dtype, target, disp, nullptr);
}
void Window::compare_and_swap(const void* origin, const void* compare, void* result, Dtype dtype,
                              int target, std::int64_t disp) {
  // MPI's origin is the value swapped in and compare the comperand; the
  // generalised form takes (comperand, swaperand).
  impl_->atomic(Function::CompareAndSwap, Op::CswapEq, compare, origin, result, 1, dtype, target,
                disp, nullptr);
}

void Window::rmw(Op op, const void* origin, void* result, std::size_t count, Dtype dtype, int target,
                 std::int64_t disp, unsigned assertion, Request* request) {
  check_admits(Function::Rmw, op);
  auto state = request ? std::make_shared<detail::RequestState>() : nullptr;
  impl_->maybe_implicit_epoch(target, assertion, [&] {
    impl_->atomic(Function::Rmw, op, origin, nullptr, result, count, dtype, target, disp, state);
  });
  if (request) *request = Request(state, impl_->endpoint_);
}
void Window::rmw2(Op op, const void* origin, const void* origin2, void* result, std::size_t count,
                  Dtype dtype, int target, std::int64_t disp, unsigned assertion, Request* request) {
  check_admits(Function::Rmw2, op);
  auto state = request ? std::make_shared<detail::RequestState>() : nullptr;
  impl_->maybe_implicit_epoch(target, assertion, [&] {
    impl_->atomic(Function::Rmw2, op, origin, origin2, result, count, dtype, target, disp, state);
  });
  if (request) *request = Request(state, impl_->endpoint_);
}

void Request::wait() {
  if (!state_) return;
  auto& s = *state_;
  endpoint_->progress().wait([&] { return s.pending.load(std::memory_order_acquire) == 0; });
  if (s.failed) {
    std::lock_guard lk(s.mutex);
    raise(ErrorCategory::Transport, "the operation failed: " + s.error);
  }
}

bool Request::test() {
  if (!state_) return true;
  if (state_->pending.load(std::memory_order_acquire) != 0) endpoint_->progress().poll();
  if (state_->pending.load(std::memory_order_acquire) != 0) return false;
  wait();  // raises if it failed
  return true;
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
