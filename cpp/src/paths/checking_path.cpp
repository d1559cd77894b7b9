// Race-checking mode (onesided_check=races; docs/checking.md): a wrapper
// around any data path that tells the window's race log
// (races/race_log.hpp) of every access before passing it on unchanged.
//
// Invariants:
//  - Memory touched: none of its own; the inner path's, in the inner
//    path's way. Where the inner path does not complete in the call
//    (kWatch: chosen at creation), each origin buffer is read once at the
//    call for a checksum (races/checksum.hpp) and once more at the flush
//    that completes it: a change between the two is a finding. Not for
//    calls with a Request (their completion is the Request's) nor result
//    buffers (the call itself writes them).
//  - Locks: the race log's mutex, for the recording only; watched_mutex_
//    for the watched origin buffers; neither held while the inner path runs.
//  - Order and completion: the inner path's, unchanged; flush(t) and
//    flush_all() flush the inner path, then tell the log that this rank's
//    accesses to t are complete (later ones are ordered after them).
//  - Requests (MPI 4.1 12.3.5): a call that only reads the target (Rget,
//    Rget_accumulate with NO_OP) is complete at the target once its Wait
//    or Test has seen it complete: the data it read has arrived. Before
//    each access this path records, and at each flush, the reads whose
//    Request was seen complete are told to the log as done, at the time
//    Wait saw them (RequestState::waited_at). A call that writes (Rput,
//    Raccumulate, Rget_accumulate with another op) completes only locally
//    at its Wait and stays open until a flush, as MPI says.
//  - Findings of this rank's own (two of its accesses to one target, not
//    ordered by a flush) are told before the second access is issued.
#include <algorithm>
#include <mutex>
#include <vector>

#include "paths/paths.hpp"
#include "races/checksum.hpp"
#include "races/race_log.hpp"

namespace onesided::detail {
namespace {

template <bool kWatch>
class CheckingPath final : public DataPath {
 public:
  CheckingPath(std::unique_ptr<DataPath> inner, std::shared_ptr<RaceLog> log)
      : inner_(std::move(inner)),
        log_(std::move(log)),
        name_("checking(" + inner_->name() + ")"),
        description_("race checking: every access recorded and checked at the synchronisation that ends it; "
                     "underneath: " + inner_->description()) {}

  const std::string& name() const override { return name_; }
  const std::string& description() const override { return description_; }
  bool completes_in_call() const override { return inner_->completes_in_call(); }
  bool holds_get_results() const override { return inner_->holds_get_results(); }
  bool incoming_needs_polls() const override { return inner_->incoming_needs_polls(); }
  bool in_flight() const override { return inner_->in_flight(); }
  std::string ordering() const override { return inner_->ordering(); }

  // An Rput's Wait completes it only locally (MPI): no request to note, it
  // stays open until a flush.
  void put(const Where& w, const void* origin, std::size_t bytes, const RequestPtr& request) override {
    watch(note(w, bytes, CallKind::Put, AccessKind::Write), origin, bytes, request);
    inner_->put(w, origin, bytes, request);
  }
  void get(const Where& w, void* result, std::size_t bytes, const RequestPtr& request) override {
    note(w, bytes, CallKind::Get, AccessKind::Read, request);
    inner_->get(w, result, bytes, request);
  }
  void accumulate(const Where& w, const AtomicCall& call, const RequestPtr& request) override {
    RaceAccess a = access(w, call.count * dtype_info(call.dtype).size, CallKind::Accumulate,
                          call.op == Op::NoOp ? AccessKind::AtomicRead : AccessKind::AtomicWrite);
    a.function = call.function;
    a.dtype = call.dtype;
    a.op = call.op;
    complete_waited();
    a = log_->record(a, request && !a.writes());
    await_request(a, request);
    log_->report();
    if (call.op != Op::NoOp) {
      watch(a, call.origin, a.hi - a.lo, request);
      if (call.origin2) watch(a, call.origin2, a.hi - a.lo, request);
    }
    inner_->accumulate(w, call, request);
  }
  void put_pieces(const Where& w, const std::byte* origin, std::span<const Piece> pieces,
                  const RequestPtr& request) override {
    for (const Piece& p : pieces)
      watch(note(shifted(w, p.target), p.bytes, CallKind::Put, AccessKind::Write), origin + p.origin, p.bytes, request);
    inner_->put_pieces(w, origin, pieces, request);
  }
  void get_pieces(const Where& w, std::byte* result, std::span<const Piece> pieces,
                  const RequestPtr& request) override {
    for (const Piece& p : pieces) note(shifted(w, p.target), p.bytes, CallKind::Get, AccessKind::Read, request);
    inner_->get_pieces(w, result, pieces, request);
  }
  void flush(int target) override {
    inner_->flush(target);
    verify(target);
    tell_flushed(target);
    log_->report();
  }
  void flush_all() override {
    inner_->flush_all();
    verify(-1);
    tell_flushed(-1);
    log_->report();
  }
  // Local completion frees the origin buffers but orders nothing at the
  // target: the accesses stay open.
  void flush_local(int target) override {
    target < 0 ? inner_->flush_all() : inner_->flush(target);
    verify(target);
    complete_waited();
    log_->report();
  }
  void complete_when_drained(int target, const RequestPtr& request) override {
    inner_->complete_when_drained(target, request);
  }
  void notify(int target, std::size_t index, const RequestPtr& request) override {
    inner_->notify(target, index, request);
  }
  std::string notification() const override { return inner_->notification(); }
  void expect_incoming(int delta) override { inner_->expect_incoming(delta); }

 private:
  static RaceAccess access(const Where& w, std::size_t bytes, CallKind call, AccessKind kind) {
    RaceAccess a;
    a.lo = w.at;
    a.hi = w.at + bytes;
    a.target = w.target;
    a.call = call;
    a.kind = kind;
    return a;
  }
  // Put and Get carry no dtype to the path: their bytes are what the
  // conflict rule needs (a put is never atomic with anything).
  RaceAccess note(const Where& w, std::size_t bytes, CallKind call, AccessKind kind,
                  const RequestPtr& request = nullptr) {
    complete_waited();
    const bool reads_only = kind == AccessKind::Read || kind == AccessKind::AtomicRead;
    RaceAccess a = log_->record(access(w, bytes, call, kind), request && reads_only);
    await_request(a, request);
    log_->report();
    return a;
  }

  // A read with a Request, until its Wait or a flush completes it.
  struct Awaited {
    // Shared: Python drops its Request as soon as Wait returns, before the
    // next access looks here. Every epoch ends in a flush, which lets go.
    RequestPtr request;
    RaceAccess access;
  };
  void await_request(const RaceAccess& a, const RequestPtr& request) {
    // a.request implies request; testing both lets the compiler see that
    // (GCC 12 otherwise warns of a store through a null Request).
    if (!a.request || !request) return;
    request->stamp_wait.store(true, std::memory_order_relaxed);  // before the call is issued, so before its Wait
    std::lock_guard lk(awaited_mutex_);
    awaited_.push_back({request, a});
  }
  // Tells the log of the reads whose Request was seen complete, before the
  // access about to be recorded is checked against them. Under
  // awaited_mutex_ throughout, so an access recorded by another thread
  // after this one took them out finds them already told.
  void complete_waited() {
    std::lock_guard lk(awaited_mutex_);
    complete_waited_locked();
  }
  void complete_waited_locked() {
    if (awaited_.empty()) return;
    std::erase_if(awaited_, [&](const Awaited& x) {
      const std::uint64_t when = x.request->waited_at.load(std::memory_order_acquire);
      if (!when) return false;
      log_->request_completed(x.access, when);
      return true;
    });
  }
  // A flush to `target` (every target when negative) returned: the reads
  // already waited complete at their Wait's time, the rest at the flush's,
  // and nothing there is awaited any more. One hold of awaited_mutex_, so
  // a read another thread records meanwhile is either flushed here or
  // still awaited after.
  void tell_flushed(int target) {
    std::lock_guard lk(awaited_mutex_);
    complete_waited_locked();
    log_->flushed(target);
    std::erase_if(awaited_, [&](const Awaited& x) { return target < 0 || x.access.target == target; });
  }

  // An origin buffer that must not change until a flush completes its call.
  struct Watched {
    RaceAccess access;
    const void* origin;
    std::size_t bytes;
    std::uint64_t sum;
  };
  void watch(const RaceAccess& a, const void* origin, std::size_t bytes, const RequestPtr& request) {
    if constexpr (kWatch) {
      if (request || !origin || !bytes) return;
      const std::uint64_t sum = checksum(origin, bytes);
      std::lock_guard lk(watched_mutex_);
      watched_.push_back({a, origin, bytes, sum});
    }
  }
  // The calls to `target` (every target when negative) are complete: their
  // origin buffers are compared with their checksums and forgotten.
  void verify(int target) {
    if constexpr (kWatch) {
      std::vector<Watched> done;
      {
        std::lock_guard lk(watched_mutex_);
        auto keep = std::partition(watched_.begin(), watched_.end(),
                                   [&](const Watched& x) { return target >= 0 && x.access.target != target; });
        done.assign(keep, watched_.end());
        watched_.erase(keep, watched_.end());
      }
      for (const Watched& x : done)
        if (checksum(x.origin, x.bytes) != x.sum) log_->buffer_changed(x.access);
    }
  }

  std::unique_ptr<DataPath> inner_;
  std::shared_ptr<RaceLog> log_;
  std::string name_, description_;
  std::mutex watched_mutex_;
  std::vector<Watched> watched_;
  std::mutex awaited_mutex_;  // taken before the log's, never after
  std::vector<Awaited> awaited_;
};

}  // namespace

std::unique_ptr<DataPath> checking_path(std::unique_ptr<DataPath> inner, std::shared_ptr<RaceLog> log) {
  // A path whose calls complete in place leaves no time for the origin to change.
  if (inner->completes_in_call()) return std::make_unique<CheckingPath<false>>(std::move(inner), std::move(log));
  return std::make_unique<CheckingPath<true>>(std::move(inner), std::move(log));
}

}  // namespace onesided::detail
