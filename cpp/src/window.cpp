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
#include <optional>
#include <thread>
#include <vector>

#include "atomic_plan.hpp"
#include "cpu_atomics.hpp"
#include "cross_memory.hpp"
#include "doorbell.hpp"
#include "endpoint.hpp"
#include "epoch.hpp"
#include "in_flight.hpp"
#include "kernels.hpp"
#include "lock_table.hpp"
#include "nasty.hpp"
#include "onesided/error.hpp"
#include "op_set.hpp"
#include "order_tracker.hpp"
#include "ordering.hpp"
#include "protocol.hpp"
#include "region_table.hpp"
#include "request_state.hpp"
#include "shared_lock.hpp"
#include "shared_segment.hpp"

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

// MPI's standard window hints are accepted: the ones that change semantics
// (accumulate_ops, accumulate_ordering, alloc_shared_noncontig) are applied,
// the others only promise what onesided does not rely on.
// Anything else is most likely a typo, which a silent ignore would hide.
constexpr std::string_view kStandardKeys[] = {
    "no_locks", "accumulate_ordering", "accumulate_ops", "same_size", "same_disp_unit",
    "alloc_shared_noncontig", "mpi_accumulate_granularity", "which_accumulate_ops"};

void check_info_key(const std::string& key) {
  if (key == "provider" || key == "onesided_atomics" || key == "onesided_nasty" ||
      key == "onesided_fast_path" || key.rfind("mpi_", 0) == 0)
    return;
  for (auto k : kStandardKeys)
    if (key == k) return;
  std::string known = "provider, onesided_atomics, onesided_nasty, onesided_fast_path";
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

// onesided's own part of a shared mapping, before every segment: the stripe
// locks of the CPU atomics, then one window lock per rank.
std::size_t control_bytes(int nranks) {
  return sizeof(detail::cpu::Stripes) + static_cast<std::size_t>(nranks) * sizeof(detail::SharedLockWord);
}

// Collective: whether an Allocate/Allocate_shared window takes the
// intra-node fast path (memory every rank maps; CPU atomics). Every rank
// decides from the same gathered data: all ranks on one host, none asking
// for a network provider (explicitly or through FI_PROVIDER), none asking
// for the software path or turning the fast path off (info
// onesided_fast_path=off or ONESIDED_FAST_PATH=off).
bool fast_path_agreed(Bootstrap& group, const Info& info) {
  auto value = [&](const char* key) {
    auto it = info.find(key);
    return it == info.end() ? std::string() : it->second;
  };
  auto off = [](const std::string& v) { return v == "off" || v == "false" || v == "0"; };
  const char* env_provider = std::getenv("FI_PROVIDER");
  const char* env_fast = std::getenv("ONESIDED_FAST_PATH");
  const std::string provider = value("provider").empty() && env_provider ? env_provider : value("provider");
  const bool wants = (provider.empty() || provider == "shm") && value("onesided_atomics") != "software" &&
                     !off(value("onesided_fast_path")) && !(env_fast && off(env_fast));
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const auto all = group.allgather(std::string(wants ? "1" : "0") + host);
  for (const auto& a : all)
    if (a[0] != '1' || a.substr(1) != all[0].substr(1)) return false;
  return true;
}

// Every provider onesided knows places RMA data straight into host memory
// that local loads read, with no separate public copy: the unified model.
// A provider onesided has not checked gets the conservative answer.
bool unified_provider(const std::string& provider) {
  const std::string name = provider.substr(0, provider.find(';'));
  for (const char* p : {"shm", "tcp", "sockets", "udp", "verbs", "efa", "cxi", "psm2", "psm3", "opx", "ucx"})
    if (name == p) return true;
  return false;
}
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
    std::int64_t pid = 0;     // for cross-memory attach on one host
    std::uint64_t base = 0;   // the window's first byte in that process
    detail::BellWord* bell = nullptr;  // its doorbell (one host, shm), rung after each post
  };

  Impl(void* base, std::size_t size, int disp_unit, const Info& info,
       std::shared_ptr<Bootstrap> group, Flavor flavor, std::unique_ptr<std::byte[]> owned,
       std::shared_ptr<detail::SharedSegment> shared = nullptr, bool fast = false)
      : group_(std::move(group)),
        rank_(group_->rank()),
        nranks_(group_->size()),
        base_(static_cast<std::byte*>(base)),
        size_(size),
        disp_unit_(disp_unit),
        flavor_(flavor),
        owned_(std::move(owned)),
        shared_(std::move(shared)),
        fast_(fast),
        epochs_(nranks_),
        in_flight_(nranks_),
        lock_tokens_(static_cast<std::size_t>(nranks_), 0),
        nocheck_(static_cast<std::size_t>(nranks_), 0),
        exclusive_(static_cast<std::size_t>(nranks_), 0),
        order_(nranks_),
        posts_(new std::atomic<int>[static_cast<std::size_t>(nranks_)]()),
        completes_(new std::atomic<int>[static_cast<std::size_t>(nranks_)]()),
        start_consumed_(static_cast<std::size_t>(nranks_), 0) {
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
    const std::string nasty = value("onesided_nasty");
    if (auto seed = detail::NastyQueue::seed_from(info.count("onesided_nasty") ? &nasty : nullptr)) {
      nasty_ = std::make_unique<detail::NastyQueue>(*seed, rank_);
      hook_ = std::make_shared<Hook>();
      hook_->impl = this;
    }
    const std::string shortcut = value("onesided_fast_path");
    const char* env_fast = std::getenv("ONESIDED_FAST_PATH");
    auto off = [](const std::string& v) { return v == "off" || v == "false" || v == "0"; };
    shortcuts_ = !off(shortcut) && !(env_fast && off(env_fast));
    if (fast_ && shared_)
      lock_words_ = reinterpret_cast<detail::SharedLockWord*>(shared_->control() + sizeof(detail::cpu::Stripes));
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
      if (flavor_ != Flavor::Dynamic) {
        region_ = endpoint_->transport().register_region(base_, size_);
        region = region_->remote();
      }
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
    pack(mine, static_cast<std::int64_t>(::getpid()));
    pack(mine, reinterpret_cast<std::uint64_t>(base_));
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
      p.pid = rd.get<std::int64_t>();
      p.base = rd.get<std::uint64_t>();
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
    plan_ = detail::AtomicPlan(declared_, native, everywhere, provider_,
                               software_only_.empty() ? endpoint_->transport().native_unavailable()
                                                      : software_only_);
    rule_ = detail::OrderRule(ordering_, endpoint_->transport().atomic_order());
    for (const auto& d : kDtypes) (plan_.path(d.id).native ? any_native_ : any_software_) = true;
    // Order needs watching only where native atomics may not keep it: a
    // provider that lacks a required order, or keeps it only up to a size.
    // (Ordering is per datatype (seed 000), and a dtype has one path, so
    // native and software dtypes need no order between them.)
    track_order_ = any_native_ && !rule_.native_always_ordered();
    if (fast_) {
      // Every op completes in the calling thread, sequentially consistent:
      // nothing to track, every order kept.
      plan_ = detail::AtomicPlan::cpu(detail::cpu::lock_free);
      track_order_ = false;
    }
    remote_regions_.resize(static_cast<std::size_t>(nranks_));
    remote_stale_.assign(static_cast<std::size_t>(nranks_), 1);
    // On one host with shm (and the shortcuts not switched off), ranks may
    // reach each other without the provider: cross-memory attach for a
    // Create window's puts and gets, doorbells, and window locks in shared
    // memory (the fast path has its own), which cost atomic instructions
    // instead of two round trips to the target's progress engine.
    const bool local = same_host && shortcuts_ && provider_ == "shm";
    const bool try_cma = local && flavor_ == Flavor::Create;
    bool reach = try_cma;
    for (int r = 0; reach && r < nranks_; ++r)
      if (r != rank_ && peers_[r].size > 0)
        reach = detail::cma::can_read(static_cast<pid_t>(peers_[r].pid), peers_[r].base, 1);
    // Round 3, which is also the barrier no rank may pass before every
    // rank has filled in its peer table (the handlers read it): may this
    // rank reach every other's window by cross-memory attach, and does it
    // want shared-memory locks (onesided_fast_path may differ by rank)?
    const bool try_locks = local && !fast_;
    all = group_->allgather(std::string{reach ? '1' : '0', try_locks ? '1' : '0'});
    cma_ = try_cma;
    bool locks = try_locks;
    for (const auto& a : all) {
      cma_ = cma_ && a[0] == '1';
      locks = locks && a[1] == '1';
    }
    // An idle target sleeps on its doorbell; posting to it rings.
    if (local)
      for (int r = 0; r < nranks_; ++r)
        if (r != rank_) peers_[r].bell = detail::Doorbell::of(static_cast<pid_t>(peers_[r].pid));
    if (!locks) return;
    const std::size_t bytes = static_cast<std::size_t>(nranks_) * sizeof(detail::SharedLockWord);
    if (shared_) {
      lock_words_ = reinterpret_cast<detail::SharedLockWord*>(shared_->control() + sizeof(detail::cpu::Stripes));
    } else {
      try {
        lock_segment_ = detail::SharedSegment::create(*group_, 0, false, bytes);
      } catch (const Error&) {
        return;  // raised at every rank alike: every rank keeps lock messages
      }
      lock_words_ = reinterpret_cast<detail::SharedLockWord*>(lock_segment_->control());
    }
    // Native atomics and (without cross-memory attach) puts need this
    // process to poll while an origin holds its lock, as with lock messages.
    endpoint_->progress().watch(this, [word = &lock_words_[rank_]] { return detail::SharedLock(*word).busy(); });
    watching_ = true;
  }

  // Local teardown, safe to call twice.
  void release() {
    if (freed_.exchange(true)) return;
    if (hook_) {
      std::lock_guard lk(hook_->mutex);
      hook_->impl = nullptr;
    }
    if (watching_) endpoint_->progress().unwatch(this);
    if (endpoint_ && id_) endpoint_->detach(id_);
    region_.reset();
    std::lock_guard lk(regions_mutex_);
    attached_mrs_.clear();
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
    bool await_post;
    {
      std::lock_guard lk(epoch_mutex_);
      epochs_.check_access(target);
      await_post = epochs_.started() && !start_consumed_[target];
    }
    if (await_post) consume_post(target);
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
    release_held(target);
    // The fast path's ops completed in their calls (nothing is ever in
    // flight): make their plain stores visible before whatever
    // synchronisation follows, and that is all.
    if (fast_) {
      std::atomic_thread_fence(std::memory_order_seq_cst);
      return raise_if_failed();
    }
    // This rank too: its native atomics on its own memory go through the
    // provider (software ones and local puts complete at once and are not
    // counted).
    const auto cut = in_flight_.cut(target);
    endpoint_->progress().wait([&] { return in_flight_.drained(target, cut); });
    raise_if_failed();
  }

  void flush_all() {
    check_live();
    release_held(-1);
    if (fast_) {
      std::atomic_thread_fence(std::memory_order_seq_cst);
      return raise_if_failed();
    }
    std::vector<detail::InFlight::Token> cuts(static_cast<std::size_t>(nranks_));
    for (int r = 0; r < nranks_; ++r) cuts[r] = in_flight_.cut(r);
    endpoint_->progress().wait([&] {
      for (int r = 0; r < nranks_; ++r)
        if (!in_flight_.drained(r, cuts[r])) return false;
      return true;
    });
    raise_if_failed();
  }

  // ---- nasty mode ----------------------------------------------------------

  // What a Request reaches its window through; cut when the window goes.
  struct Hook {
    std::mutex mutex;
    Impl* impl = nullptr;
  };

  // Issues `post` now, or, in nasty mode, holds it until the operation
  // must complete. A held operation counts against its request so Wait
  // and Test see it.
  template <class Post>
  void issue(int target, bool accumulate, const detail::Access& access,
             const std::shared_ptr<detail::RequestState>& request, Post&& post) {
    if (!nasty_) return post();
    if (request) {
      request->pending.fetch_add(1, std::memory_order_relaxed);
      if (!request->release_held)
        request->release_held = [hook = hook_, target] {
          std::lock_guard lk(hook->mutex);
          if (hook->impl) hook->impl->release_held(target);
        };
    }
    nasty_->hold({target, std::this_thread::get_id(), accumulate, access,
                  [post = std::function<void()>(std::forward<Post>(post)), request] {
                    try {
                      post();
                    } catch (const std::exception& e) {
                      if (request) request->complete(e.what());
                      throw;
                    }
                    if (request) request->complete(nullptr);
                  }});
  }

  // Nasty mode: issue the held operations to `target` (every target when
  // negative) in a random legal order, each complete before the next, so
  // the order chosen is the order they take effect.
  void release_held(int target) {
    if (!nasty_) return;
    // One release at a time: a flush must not return while another
    // thread's release is still issuing operations it covers, and each
    // thread's ops must be issued in an order the rule allows.
    std::lock_guard serial(release_mutex_);
    std::exception_ptr first;
    for (auto& op : nasty_->release(target, rule_)) {
      try {
        op.post();
      } catch (...) {
        if (!first) first = std::current_exception();
        continue;
      }
      const auto cut = in_flight_.cut(op.target);
      endpoint_->progress().wait([&] { return in_flight_.drained(op.target, cut); });
    }
    if (first) std::rethrow_exception(first);
  }

  // ---- operations ----------------------------------------------------------

  // Where an operation lands: the provider's handle for the memory and the
  // offset in it, and the position in the target's address space that
  // ordering and the target's checks use (window offset, or the absolute
  // address on a dynamic window).
  struct Where {
    detail::RemoteRegion region;
    std::uint64_t offset = 0;
    std::uint64_t at = 0;
  };

  Where locate(int target, std::int64_t disp, std::size_t bytes) {
    if (flavor_ != Flavor::Dynamic) {
      const auto off = target_offset(target, disp, bytes);
      return {peers_[target].region, off, off};
    }
    const auto addr = static_cast<std::uint64_t>(disp);
    if (target == rank_) {
      std::lock_guard lk(regions_mutex_);
      if (const auto* r = local_regions_.find(addr, bytes)) return {r->remote, addr - r->base, addr};
    } else {
      for (int attempt = 0; attempt < 2; ++attempt) {
        if (attempt == 1) refresh_regions(target);
        std::unique_lock lk(regions_mutex_);
        if (remote_stale_[target]) {
          lk.unlock();
          refresh_regions(target);
          lk.lock();
        }
        if (const auto* r = remote_regions_[target].find(addr, bytes)) return {r->remote, addr - r->base, addr};
      }
    }
    raise(ErrorCategory::Bounds, "target range out of window: address " + std::to_string(addr) + " + " +
                                     std::to_string(bytes) + " bytes is not inside a region rank " +
                                     std::to_string(target) + " has attached to the dynamic window");
  }

  // The local memory of a checked position on this rank.
  std::byte* local(std::uint64_t at) const {
    return flavor_ == Flavor::Dynamic ? reinterpret_cast<std::byte*>(at) : base_ + at;
  }

  void put(const void* origin, std::size_t count, Dtype dtype, int target, std::int64_t disp,
           const std::shared_ptr<detail::RequestState>& request) {
    access(target);
    const std::size_t bytes = count * dtype_info(dtype).size;
    const Where w = locate(target, disp, bytes);
    if (bytes == 0) return;
    issue(target, false, {}, request, [=, this] {
      if (fast_) {
        std::memmove(shared_->base(target) + w.at, origin, bytes);
        return;
      }
      if (target == rank_) {
        std::memmove(local(w.at), origin, bytes);
        return;
      }
      if (cma_) {
        const Peer& p = peers_[target];
        return detail::cma::write(static_cast<pid_t>(p.pid), p.base + w.at, origin, bytes);
      }
      const Peer& p = peers_[target];
      submit(new RmaDone(this, target, request), [&](RmaDone* done) {
        endpoint_->transport().write(p.addr, origin, bytes, w.region, w.offset, done);
      });
      ring(target);
    });
  }

  void get(void* result, std::size_t count, Dtype dtype, int target, std::int64_t disp,
           const std::shared_ptr<detail::RequestState>& request) {
    access(target);
    const std::size_t bytes = count * dtype_info(dtype).size;
    const Where w = locate(target, disp, bytes);
    if (bytes == 0) return;
    issue(target, false, {}, request, [=, this] {
      if (fast_) {
        std::memmove(result, shared_->base(target) + w.at, bytes);
        return;
      }
      if (target == rank_) {
        std::memmove(result, local(w.at), bytes);
        return;
      }
      if (cma_) {
        const Peer& p = peers_[target];
        return detail::cma::read(static_cast<pid_t>(p.pid), result, p.base + w.at, bytes);
      }
      const Peer& p = peers_[target];
      submit(new RmaDone(this, target, request), [&](RmaDone* done) {
        endpoint_->transport().read(p.addr, result, bytes, w.region, w.offset, done);
      });
      ring(target);
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
    const Where w = locate(target, disp, count * esize);
    if (count == 0) return;
    const bool native = plan_.path(dtype).native;
    const detail::Access a{w.at, w.at + count * esize, result != nullptr, op != Op::NoOp,
                           native ? detail::Channel::Native : detail::Channel::Messages};
    issue(target, true, a, request, [=, this] {
      if (fast_) {
        std::byte* t = shared_->base(target) + w.at;
        detail::cpu::apply(op, dtype, t, shared_->offset_of(t), origin, origin2, result, count,
                           *reinterpret_cast<detail::cpu::Stripes*>(shared_->control()));
        return;
      }
      if (native)
        native_atomic(f, op, origin, origin2, result, count, dtype, target, w, a, request);
      else
        software_atomic(op, origin, origin2, result, count, dtype, target, w, a, request);
    });
  }

  // accumulate_ordering where the transport does not keep it: wait until
  // the earlier overlapping ops it must follow have completed.
  void keep_order(int target, const detail::Access& a) {
    if (!track_order_) return;
    auto earlier = order_.before(rule_, target, a,
                                 [&](detail::InFlight::Token t) { return in_flight_.pending(target, t); });
    if (earlier.empty()) return;
    endpoint_->progress().wait([&] {
      for (auto t : earlier)
        if (in_flight_.pending(target, t)) return false;
      return true;
    });
  }
  void note_order(int target, detail::InFlight::Token token, const detail::Access& a) {
    if (track_order_) order_.record(target, token, a);
  }

  // The provider's atomics, for every rank including this one: a local
  // software update would not be atomic with the provider's.
  void native_atomic(Function f, Op op, const void* origin, const void* origin2, void* result,
                     std::size_t count, Dtype dtype, int target, const Where& w,
                     const detail::Access& a, const std::shared_ptr<detail::RequestState>& request) {
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
      detail::Access part = a;
      part.lo = a.lo + first * esize;
      part.hi = part.lo + n * esize;
      keep_order(target, part);
      // libfabric's compare form takes (buf = value swapped in, compare =
      // comperand or mask); ours is (origin = comperand, origin2 = swap).
      const void* buf = kind == detail::AtomicKind::Compare ? at(origin2, first) : at(origin, first);
      const void* cmp = kind == detail::AtomicKind::Compare ? at(origin, first) : nullptr;
      void* res = result ? static_cast<std::byte*>(result) + first * esize : nullptr;
      auto* done = new RmaDone(this, target, request, keep);
      note_order(target, done->token, part);
      submit(done, [&](RmaDone* d) {
        endpoint_->transport().atomic(p.addr, kind, nop, dtype, buf, cmp, res, n, w.region,
                                      w.offset + first * esize, d);
      });
      ring(target);
    }
  }

  void software_atomic(Op op, const void* origin, const void* origin2, void* result,
                       std::size_t count, Dtype dtype, int target, const Where& w,
                       const detail::Access& a, const std::shared_ptr<detail::RequestState>& request) {
    keep_order(target, a);
    if (target == rank_) {
      std::lock_guard lk(atomic_mutex_);
      kernels::apply(op, dtype, local(w.at), origin, origin2, result, count);
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
      h.offset = w.at + first * esize;
      auto* pending = new PendingAtomic(
          this, target, result ? static_cast<std::byte*>(result) + first * esize : nullptr, nbytes, request);
      note_order(target, pending->token, a);
      h.token = reinterpret_cast<std::uint64_t>(pending);
      msg.resize(sizeof h + nbytes * static_cast<std::size_t>(operands));
      std::memcpy(msg.data(), &h, sizeof h);
      if (operands >= 1)
        std::memcpy(msg.data() + sizeof h, static_cast<const std::byte*>(origin) + first * esize, nbytes);
      if (operands >= 2)
        std::memcpy(msg.data() + sizeof h + nbytes,
                    static_cast<const std::byte*>(origin2) + first * esize, nbytes);
      submit(pending, [&](PendingAtomic*) { endpoint_->transport().send(p.addr, msg.data(), msg.size()); });
      ring(target);
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

  // MODE_NOSTORE, MODE_NOPUT and MODE_NOPRECEDE are hints onesided does
  // not need (it flushes and synchronises anyway; nothing is cached), so
  // they are safely ignored; MODE_NOSUCCEED ends fence epochs.
  void fence(unsigned assertion) {
    check_live();
    {
      std::lock_guard lk(epoch_mutex_);
      epochs_.on_fence(assertion);
    }
    flush_all();
    group_->barrier();
    // Local stores before the fence and RMA updates completed by it are
    // visible on the other side of it.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    mark_regions_stale();
  }

  void lock(int target, LockType type, unsigned assertion) {
    check_live();
    check_rank(target);
    const bool nocheck = (assertion & mode::kNoCheck) != 0;
    {
      std::lock_guard lk(epoch_mutex_);
      epochs_.on_lock(target);
      nocheck_[target] = nocheck;
      exclusive_[target] = type == LockType::Exclusive;
    }
    mark_regions_stale();
    if (!nocheck) acquire(target, type == LockType::Exclusive);
  }

  void unlock(int target) {
    check_live();
    check_rank(target);
    bool nocheck, exclusive;
    {
      std::lock_guard lk(epoch_mutex_);
      epochs_.on_unlock(target);
      nocheck = nocheck_[target];
      exclusive = exclusive_[target];
    }
    flush(target);
    if (!nocheck) release_lock(target, exclusive);
  }

  void lock_all(unsigned assertion) {
    check_live();
    const bool nocheck = (assertion & mode::kNoCheck) != 0;
    {
      std::lock_guard lk(epoch_mutex_);
      epochs_.on_lock_all();
      lock_all_nocheck_ = nocheck;
    }
    mark_regions_stale();
    if (nocheck) return;
    if (lock_words_) {
      // In rank order, like any process taking several locks.
      for (int r = 0; r < nranks_; ++r) detail::SharedLock(lock_words_[r]).lock(false);
      return;
    }
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
    if (lock_words_) {
      for (int r = 0; r < nranks_; ++r) detail::SharedLock(lock_words_[r]).unlock(false);
      return;
    }
    std::vector<std::atomic<int>> flags(static_cast<std::size_t>(nranks_));
    for (int r = 0; r < nranks_; ++r) request_unlock(r, &flags[r]);
    endpoint_->progress().wait([&] {
      for (auto& f : flags)
        if (f.load(std::memory_order_acquire) == 0) return false;
      return true;
    });
  }

  // ---- active target (post/start/complete/wait) ---------------------------

  std::vector<bool> group_mask(const std::vector<int>& ranks) const {
    std::vector<bool> mask(static_cast<std::size_t>(nranks_), false);
    for (int r : ranks) {
      check_rank(r);
      if (mask[r]) raise(ErrorCategory::Argument, "rank " + std::to_string(r) + " appears twice in the group");
      mask[r] = true;
    }
    return mask;
  }

  void post(const std::vector<int>& ranks) {
    check_live();
    const auto mask = group_mask(ranks);
    {
      std::lock_guard lk(epoch_mutex_);
      epochs_.on_post(mask);
    }
    // Local stores before Post are visible to the origins' RMA after it.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (!fast_) endpoint_->progress().expect_traffic(+1);
    for (int o = 0; o < nranks_; ++o) {
      if (!mask[o]) continue;
      if (o == rank_) posts_[o].fetch_add(1, std::memory_order_release);
      else send_control(o, MsgKind::Post, 0, 0);
    }
  }

  void start(const std::vector<int>& ranks) {
    check_live();
    const auto mask = group_mask(ranks);
    std::lock_guard lk(epoch_mutex_);
    epochs_.on_start(mask);
    std::fill(start_consumed_.begin(), start_consumed_.end(), 0);
    mark_regions_stale();
  }

  // Waits for `target`'s Post of this access epoch (Start does not block,
  // so Start-before-Post patterns cannot deadlock).
  void consume_post(int target) {
    endpoint_->progress().wait([&] { return posts_[target].load(std::memory_order_acquire) > 0; });
    std::lock_guard lk(epoch_mutex_);
    if (start_consumed_[target]) return;
    posts_[target].fetch_sub(1, std::memory_order_acq_rel);
    start_consumed_[target] = 1;
  }

  void complete() {
    check_live();
    std::vector<bool> group;
    {
      std::lock_guard lk(epoch_mutex_);
      if (!epochs_.started()) epochs_.on_complete();  // raises: no Start
      group = epochs_.start_group();
    }
    for (int t = 0; t < nranks_; ++t) {
      if (!group[t]) continue;
      bool consumed;
      {
        std::lock_guard lk(epoch_mutex_);
        consumed = start_consumed_[t];
      }
      if (!consumed) consume_post(t);
      flush(t);
      if (t == rank_) completes_[t].fetch_add(1, std::memory_order_release);
      else send_control(t, MsgKind::Complete, 0, 0);
    }
    std::lock_guard lk(epoch_mutex_);
    epochs_.on_complete();
  }

  bool completes_arrived(const std::vector<bool>& group) const {
    for (int o = 0; o < nranks_; ++o)
      if (group[o] && completes_[o].load(std::memory_order_acquire) == 0) return false;
    return true;
  }

  void end_exposure(const std::vector<bool>& group) {
    for (int o = 0; o < nranks_; ++o)
      if (group[o]) completes_[o].fetch_sub(1, std::memory_order_acq_rel);
    if (!fast_) endpoint_->progress().expect_traffic(-1);
    // The origins' updates are visible to local loads after Wait.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    std::lock_guard lk(epoch_mutex_);
    epochs_.on_wait_done();
  }

  void wait() {
    check_live();
    std::vector<bool> group;
    {
      std::lock_guard lk(epoch_mutex_);
      epochs_.check_wait();
      group = epochs_.post_group();
    }
    endpoint_->progress().wait([&] { return completes_arrived(group); });
    end_exposure(group);
  }

  bool test() {
    check_live();
    std::vector<bool> group;
    {
      std::lock_guard lk(epoch_mutex_);
      epochs_.check_wait();
      group = epochs_.post_group();
    }
    if (!completes_arrived(group)) endpoint_->progress().poll();
    if (!completes_arrived(group)) return false;
    end_exposure(group);
    return true;
  }

  // ---- dynamic windows -----------------------------------------------------

  void attach(void* base, std::size_t size) {
    check_live();
    if (flavor_ != Flavor::Dynamic) raise(ErrorCategory::Argument, "Attach needs a window made by Create_dynamic");
    if (!base && size) raise(ErrorCategory::Argument, "Attach: memory is null");
    auto mr = endpoint_->transport().register_region(base, size);
    const auto addr = reinterpret_cast<std::uint64_t>(base);
    std::lock_guard lk(regions_mutex_);
    local_regions_.add({addr, size, mr->remote()});
    attached_mrs_[addr] = std::move(mr);
  }

  void detach(const void* base) {
    check_live();
    if (flavor_ != Flavor::Dynamic) raise(ErrorCategory::Argument, "Detach needs a window made by Create_dynamic");
    const auto addr = reinterpret_cast<std::uint64_t>(base);
    std::lock_guard lk(regions_mutex_);
    if (!local_regions_.remove(addr))
      raise(ErrorCategory::Argument, "Detach: this memory is not attached to the window");
    attached_mrs_.erase(addr);
  }

  void mark_regions_stale() {
    if (flavor_ != Flavor::Dynamic) return;
    std::lock_guard lk(regions_mutex_);
    std::fill(remote_stale_.begin(), remote_stale_.end(), 1);
  }

  struct RegionsReply {
    std::atomic<int> done{0};
    std::string bytes;
  };

  // Asks `target` for its attached regions (a round trip to its progress engine).
  void refresh_regions(int target) {
    RegionsReply reply;
    send_control(target, MsgKind::Regions, 0, reinterpret_cast<std::uint64_t>(&reply));
    endpoint_->progress().wait([&] { return reply.done.load(std::memory_order_acquire) != 0; });
    auto table = detail::RegionTable::from_bytes(reply.bytes);
    std::lock_guard lk(regions_mutex_);
    remote_regions_[target] = std::move(table);
    remote_stale_[target] = 0;
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
    if (lock_words_) return detail::SharedLock(lock_words_[target]).lock(exclusive);
    std::atomic<int> flag{0};
    request_lock(target, exclusive, &flag);
    endpoint_->progress().wait([&] { return flag.load(std::memory_order_acquire) != 0; });
  }

  void release_lock(int target, bool exclusive) {
    if (lock_words_) return detail::SharedLock(lock_words_[target]).unlock(exclusive);
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
    ring(target);
  }

  void ring(int target) const {
    if (auto* bell = peers_[target].bell) detail::Doorbell::ring(*bell);
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
        if (!fast_) endpoint_->progress().expect_traffic(+1);
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
        if (!fast_) endpoint_->progress().expect_traffic(-1);
        unlock_local(origin);
        send_control(origin, MsgKind::UnlockDone, 0, h.token);
        return;
      case MsgKind::LockGranted:
      case MsgKind::UnlockDone:
        reinterpret_cast<std::atomic<int>*>(h.token)->store(1, std::memory_order_release);
        return;
      case MsgKind::Post:
        posts_[origin].fetch_add(1, std::memory_order_release);
        return;
      case MsgKind::Complete:
        completes_[origin].fetch_add(1, std::memory_order_release);
        return;
      case MsgKind::Regions: {
        std::string table;
        {
          std::lock_guard lk(regions_mutex_);
          table = local_regions_.bytes();
        }
        Header r{};
        r.kind = MsgKind::RegionsReply;
        r.window = peers_[origin].window;
        r.origin = static_cast<std::uint32_t>(rank_);
        r.token = h.token;
        std::string msg(reinterpret_cast<const char*>(&r), sizeof r);
        msg += table;
        endpoint_->transport().send(peers_[origin].addr, msg.data(), msg.size());
        ring(origin);
        return;
      }
      case MsgKind::RegionsReply: {
        auto* reply = reinterpret_cast<RegionsReply*>(h.token);
        reply->bytes.assign(reinterpret_cast<const char*>(payload), len);
        reply->done.store(1, std::memory_order_release);
        return;
      }
    }
  }

  // Whether [at, at + bytes) is this rank's window memory.
  bool inside(std::uint64_t at, std::size_t bytes) {
    if (flavor_ == Flavor::Dynamic) {
      std::lock_guard lk(regions_mutex_);
      return local_regions_.find(at, bytes) != nullptr;
    }
    return at <= size_ && bytes <= size_ - at;
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
    else if (!inside(h.offset, bytes))
      error = "target range outside the window (checked at the target)";
    if (error.empty()) {
      std::lock_guard lk(atomic_mutex_);
      kernels::apply(h.op, h.dtype, local(h.offset), payload, payload + bytes,
                     (h.flags & detail::kFetch) ? reply.data() + sizeof(Header) : nullptr, h.count);
    } else {
      r.flags = detail::kFailed;
      reply.resize(sizeof(Header));
      reply.insert(reply.end(), reinterpret_cast<const std::byte*>(error.data()),
                   reinterpret_cast<const std::byte*>(error.data() + error.size()));
    }
    std::memcpy(reply.data(), &r, sizeof r);
    endpoint_->transport().send(peers_[h.origin].addr, reply.data(), reply.size());
    ring(static_cast<int>(h.origin));
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
  std::shared_ptr<detail::SharedSegment> shared_;  // Allocate_shared's memory, or the fast path's
  bool fast_ = false;  // intra-node fast path: direct loads, stores and CPU atomics
  bool cma_ = false;   // Create windows on one host: puts and gets by cross-memory attach
  bool shortcuts_ = true;  // onesided_fast_path / ONESIDED_FAST_PATH not off
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
  // On one host with shm (the fast path included): every rank's window lock
  // in a shared mapping. Null otherwise: the lock is the target's
  // LockTable, reached by messages.
  detail::SharedLockWord* lock_words_ = nullptr;
  std::shared_ptr<detail::SharedSegment> lock_segment_;  // lock_words_ when the memory is not shared
  bool watching_ = false;
  std::vector<std::uint8_t> exclusive_;  // target -> held exclusively; guarded by epoch_mutex_

  // accumulate_ordering beyond what the transport keeps.
  detail::OrderRule rule_;
  detail::OrderTracker order_;
  bool track_order_ = false, any_native_ = false, any_software_ = false;

  // Nasty mode (null when off).
  std::unique_ptr<detail::NastyQueue> nasty_;
  std::shared_ptr<Hook> hook_;
  std::mutex release_mutex_;

  // Active target: Posts and Completes received from each rank, not yet
  // matched; which targets' Posts the open access epoch has matched
  // (guarded by epoch_mutex_).
  std::unique_ptr<std::atomic<int>[]> posts_, completes_;
  std::vector<std::uint8_t> start_consumed_;

  // Dynamic windows: this rank's attached regions and the origin-side
  // copies of every target's (refreshed at epoch starts and on a miss).
  std::mutex regions_mutex_;
  detail::RegionTable local_regions_;
  std::map<std::uint64_t, std::unique_ptr<detail::LocalRegion>> attached_mrs_;
  std::vector<detail::RegionTable> remote_regions_;
  std::vector<std::uint8_t> remote_stale_;
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
  if (fast_path_agreed(*group, info)) {
    // Page-aligned segments keep every element naturally aligned.
    auto segment = detail::SharedSegment::create(*group, size, true, control_bytes(group->size()));
    void* base = segment->base(group->rank());
    return std::unique_ptr<Window>(new Window(std::make_unique<Impl>(
        base, size, disp_unit, info, std::move(group), Flavor::Allocate, nullptr, std::move(segment), true)));
  }
  // 64-byte alignment keeps every element naturally aligned for atomics.
  auto memory = std::make_unique<std::byte[]>(size + 64);
  void* base = memory.get() + (64 - reinterpret_cast<std::uintptr_t>(memory.get()) % 64) % 64;
  return std::unique_ptr<Window>(new Window(std::make_unique<Impl>(
      base, size, disp_unit, info, std::move(group), Flavor::Allocate, std::move(memory))));
}

std::unique_ptr<Window> Window::allocate_shared(std::size_t size, int disp_unit, const Info& info,
                                                std::shared_ptr<Bootstrap> group) {
  if (!group) raise(ErrorCategory::Argument, "a window needs a group (Bootstrap)");
  const auto key = info.find("alloc_shared_noncontig");
  const std::string value = key == info.end() ? "false" : key->second;
  if (value != "true" && value != "false")
    raise(ErrorCategory::Argument, "alloc_shared_noncontig must be true or false, not '" + value + "'");
  const bool noncontig = value == "true";
  const bool fast = fast_path_agreed(*group, info);
  auto segment = detail::SharedSegment::create(*group, size, noncontig, control_bytes(group->size()));
  void* base = segment->base(group->rank());
  return std::unique_ptr<Window>(new Window(std::make_unique<Impl>(
      base, size, disp_unit, info, std::move(group), Flavor::Shared, nullptr, std::move(segment), fast)));
}

std::unique_ptr<Window> Window::create_dynamic(const Info& info, std::shared_ptr<Bootstrap> group) {
  if (!group) raise(ErrorCategory::Argument, "a window needs a group (Bootstrap)");
  return std::unique_ptr<Window>(
      new Window(std::make_unique<Impl>(nullptr, 0, 1, info, std::move(group), Flavor::Dynamic, nullptr)));
}

SharedMemory Window::shared_query(int rank) const {
  const auto& seg = impl_->shared_;
  if (!seg) raise(ErrorCategory::Argument, "Shared_query needs a window made by Allocate_shared");
  if (rank == kProcNull) {
    rank = 0;
    for (int r = 0; r < impl_->nranks_; ++r)
      if (seg->size(r) > 0) {
        rank = r;
        break;
      }
  }
  impl_->check_rank(rank);
  return {seg->base(rank), seg->size(rank), impl_->peers_[rank].disp_unit, seg};
}

void Window::attach(void* base, std::size_t size) { impl_->attach(base, size); }
void Window::detach(const void* base) { impl_->detach(base); }

void* Window::base() const { return impl_->base_; }
std::size_t Window::size() const { return impl_->size_; }
int Window::disp_unit() const { return impl_->disp_unit_; }
int Window::rank() const { return impl_->rank_; }
int Window::group_size() const { return impl_->nranks_; }
Flavor Window::flavor() const { return impl_->flavor_; }
// Shared windows are plain shared memory; the providers onesided knows
// write straight into the exposed memory (see unified_provider).
Model Window::model() const {
  return impl_->flavor_ == Flavor::Shared || unified_provider(impl_->provider_) ? Model::Unified
                                                                                : Model::Separate;
}
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
      {"memory_model", model() == Model::Unified ? "unified" : "separate"},
      {"onesided_ordering", impl_->fast_ ? "intra-node fast path: each op takes effect before its call "
                                           "returns; every order kept"
                                         : impl_->rule_.describe(impl_->any_native_, impl_->any_software_)},
      {"onesided_nasty", impl_->nasty_ ? "seed " + std::to_string(impl_->nasty_->seed()) : "off"},
      {"onesided_fast_path", impl_->fast_ ? "on" : "off"},
      {"onesided_put_get", impl_->fast_ ? "memcpy on shared memory"
                           : impl_->cma_ ? "cross-memory attach (process_vm_writev/readv)"
                                         : "provider " + impl_->provider_},
      {"onesided_locks", impl_->lock_words_ ? "shared memory (atomic instructions, no messages)"
                                            : "messages to the target's progress engine"},
  };
}

// Interim, until the paths are objects: derived from the creation flags.
const std::string& Window::path_name() const {
  static const std::string shm = "shared-memory", cma = "cross-memory", prov = "provider";
  return impl_->fast_ ? shm : impl_->cma_ ? cma : prov;
}
const std::string& Window::path_description() const {
  static const std::string shm = "loads, stores and CPU atomics on memory every rank maps",
                           cma = "puts and gets by cross-memory attach; atomics through the provider",
                           prov = "libfabric RMA and atomics through the provider";
  return impl_->fast_ ? shm : impl_->cma_ ? cma : prov;
}
bool Window::completes_in_call() const { return impl_->fast_ && !impl_->nasty_; }

bool Window::native_atomics(Dtype dtype) const { return impl_->plan_.path(dtype).native; }
const std::string& Window::atomics_reason(Dtype dtype) const { return impl_->plan_.path(dtype).reason; }
std::size_t Window::native_count(Function f, Op op, Dtype dtype) const {
  return impl_->plan_.native_count(f, op, dtype);
}

namespace {
std::shared_ptr<detail::RequestState> state_for(Request* request) {
  return request ? std::make_shared<detail::RequestState>() : nullptr;
}
}  // namespace

void Window::put(const void* origin, std::size_t count, Dtype dtype, int target, std::int64_t disp,
                 Request* request) {
  auto state = state_for(request);
  impl_->put(origin, count, dtype, target, disp, state);
  if (request) *request = Request(state, impl_->endpoint_);
}
void Window::get(void* result, std::size_t count, Dtype dtype, int target, std::int64_t disp,
                 Request* request) {
  auto state = state_for(request);
  impl_->get(result, count, dtype, target, disp, state);
  if (request) *request = Request(state, impl_->endpoint_);
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
                        std::int64_t disp, Op op, Request* request) {
  check_admits(Function::Accumulate, op);
  auto state = state_for(request);
  impl_->atomic(Function::Accumulate, op, origin, nullptr, nullptr, count, dtype, target, disp, state);
  if (request) *request = Request(state, impl_->endpoint_);
}
void Window::get_accumulate(const void* origin, void* result, std::size_t count, Dtype dtype,
                            int target, std::int64_t disp, Op op, Request* request) {
  check_admits(Function::GetAccumulate, op);
  auto state = state_for(request);
  impl_->atomic(Function::GetAccumulate, op, origin, nullptr, result, count, dtype, target, disp, state);
  if (request) *request = Request(state, impl_->endpoint_);
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
  auto state = state_for(request);
  impl_->maybe_implicit_epoch(target, assertion, [&] {
    impl_->atomic(Function::Rmw, op, origin, nullptr, result, count, dtype, target, disp, state);
  });
  if (request) *request = Request(state, impl_->endpoint_);
}
void Window::rmw2(Op op, const void* origin, const void* origin2, void* result, std::size_t count,
                  Dtype dtype, int target, std::int64_t disp, unsigned assertion, Request* request) {
  check_admits(Function::Rmw2, op);
  auto state = state_for(request);
  impl_->maybe_implicit_epoch(target, assertion, [&] {
    impl_->atomic(Function::Rmw2, op, origin, origin2, result, count, dtype, target, disp, state);
  });
  if (request) *request = Request(state, impl_->endpoint_);
}

void Request::wait() {
  if (!state_) return;
  auto& s = *state_;
  if (s.release_held) s.release_held();
  endpoint_->progress().wait([&] { return s.pending.load(std::memory_order_acquire) == 0; });
  if (s.failed) {
    std::lock_guard lk(s.mutex);
    raise(ErrorCategory::Transport, "the operation failed: " + s.error);
  }
}

bool Request::test() {
  if (!state_) return true;
  if (state_->release_held) state_->release_held();
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
void Window::post(const std::vector<int>& group, unsigned) { impl_->post(group); }
void Window::start(const std::vector<int>& group, unsigned) { impl_->start(group); }
void Window::complete() { impl_->complete(); }
void Window::wait() { impl_->wait(); }
bool Window::test() { return impl_->test(); }
void Window::free() { impl_->free(); }

}  // namespace onesided
