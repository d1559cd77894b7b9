// Completion for the paths whose operations outlive their calls (provider,
// cross-memory, software atomics): every operation is counted per target
// from the moment it is posted until the transport (or the target's reply)
// reports it complete, so flush(t) waits for exactly the operations issued
// before it, whatever other threads issue meanwhile.
//
// Notified RMA rides on the same count: a notification is an operation
// in flight from its call until its Notify message is posted, which
// happens once every operation to its target begun before the call has
// ended (its cut), by whichever thread ends the last of them. The target
// acknowledges each Notify once its counter is incremented (NotifyDone,
// in send order, as every message between one pair); a flush also waits
// for the acknowledgements of the notifications posted before it, and a
// notification's request completes with its acknowledgement.
//
// Operations are recycled, not freed: an ended one goes onto its target's
// spare list and the next begin() to that target takes it, both under the
// hold of in_flight_'s slot mutex that numbering the operation takes
// anyway, so issuing and completing allocate nothing once the list holds
// as many as are in flight at once (up to kMaxSpare per target).
//
// Who writes what: in_flight_ is internally locked per target; spare_[t]
// is guarded by in_flight_'s slot mutex of t; an Op's fields are written
// by the thread that took it from the list (before posting it) and then by
// the thread that ends it (before returning it to the list); the first
// error is written by whichever thread completes a failed operation, under
// error_mutex_, and read and cleared by the flushing thread. A target's
// waiting notifications are under its Marks' mutex, which is held while
// their messages are posted so they leave in call order; `waiting` says,
// without the lock, whether there are any. `sent` is written under that
// mutex, `acked` by the thread that dispatches NotifyDone (release; the
// flush reads it with acquire); `unacked`, the requests awaiting their
// acknowledgement in send order, under ack_mutex. `completing_` counts the
// threads inside done() (each adds and, last, subtracts with release); the
// destructor waits (acquire) for it to be 0, because ending an operation
// lets a flush return, and its window be freed, before the completing
// thread has left this object.

#pragma once

#include <array>
#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "paths/in_flight.hpp"
#include "onesided/error.hpp"
#include "paths/data_path.hpp"
#include "peers/peer_watch.hpp"
#include "state/window_state.hpp"

namespace onesided::detail {

class InFlightOps {
 public:
  explicit InFlightOps(WindowState& s)
      : s_(s),
        in_flight_(s.nranks),
        marks_(new Marks[static_cast<std::size_t>(s.nranks)]),
        spare_(new std::vector<Op*>[static_cast<std::size_t>(s.nranks)]),
        targets_(s.nranks) {}
  ~InFlightOps() {
    // A completing thread may still be inside done() for an operation whose
    // end already let a flush (or a drained request) return, and so the
    // window be freed and dropped: wait until it has left this object.
    while (completing_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
    for (int t = 0; t < targets_; ++t)
      for (Op* op : spare_[t]) delete op;
  }
  InFlightOps(const InFlightOps&) = delete;
  InFlightOps& operator=(const InFlightOps&) = delete;

  // An operation in flight (a put, get, native or software atomic), from
  // begin() until it ends, exactly once: by complete() when the transport
  // (or the target's reply) reports it, or by abandon() when posting it
  // failed (the caller got the error). Then it is back on the spare list:
  // neither its poster nor its completer may touch it afterwards.
  struct Op final : Completion {
    static constexpr std::size_t kScratch = 64;
    InFlightOps* ops = nullptr;
    int target = 0;
    InFlight::Token token = 0;
    RequestPtr request;
    std::shared_ptr<void> keep;  // memory the provider uses until completion, if not `scratch`
    alignas(16) std::array<std::byte, kScratch> scratch;  // a small native atomic's ones and fetch room
    // Where a reply's bytes go (a software atomic's old values, a gathered
    // get's pieces): `bytes` of them from `result`, or, when `gathered`,
    // the pieces of the GatherPlan (piece_runs.hpp) `result` points to.
    void* result = nullptr;
    std::size_t bytes = 0;
    bool gathered = false;
    void complete(const char* error) override { ops->done(this, error); }
    void abandon() { ops->done(this, nullptr); }
  };

  // Begins an operation to `target`, covered by `request` (if any).
  Op* begin(int target, const RequestPtr& request) {
    Op* op = nullptr;
    std::vector<Op*>& spare = spare_[target];
    const InFlight::Token token = in_flight_.begin(target, [&] {
      if (spare.empty()) return;
      op = spare.back();
      spare.pop_back();
    });
    if (!op) op = new Op;
    op->ops = this;
    op->target = target;
    op->token = token;
    op->request = request;
    if (request) request->pending.fetch_add(1, std::memory_order_relaxed);
    return op;
  }

  // Posts an operation whose bookkeeping `op` has begun; if posting fails,
  // ends it so no flush waits for it, and rethrows.
  template <class Post>
  static void submit(Op* op, Post&& post) {
    try {
      post(op);
    } catch (...) {
      op->abandon();
      throw;
    }
  }

  bool pending(int target, InFlight::Token token) { return in_flight_.pending(target, token); }

  // Adds one to `target`'s notification counter `index` once every
  // operation to it begun before this call has ended, never earlier; a
  // request covers the notification. If one of those operations failed,
  // the notification is not sent (and the request fails): a counter never
  // stands for data that did not arrive.
  void notify_after(int target, std::size_t index, const RequestPtr& request) {
    Marks& m = marks_[target];
    {
      std::lock_guard lk(m.mutex);
      const InFlight::Token cut = in_flight_.cut(target);
      if (request) request->pending.fetch_add(1, std::memory_order_relaxed);
      m.queue.push_back({cut, in_flight_.begin(target), static_cast<std::uint32_t>(index), request});
      m.waiting.fetch_add(1, std::memory_order_seq_cst);
    }
    post_ready(target);
  }

  // flush(target)'s condition as a request (target < 0: flush_all's): it
  // completes once every operation begun before this call has ended, on
  // whichever thread ends the last of them. Nothing waits.
  void complete_when_drained(int target, const RequestPtr& request) {
    DrainWaiter w{target, {}, request};
    for (int r = 0; r < s_.nranks; ++r)
      if (target < 0 || r == target) w.cuts.push_back(in_flight_.cut(r));
    request->pending.fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard lk(drain_mutex_);
      drain_waiters_.push_back(std::move(w));
      n_drain_waiters_.store(static_cast<int>(drain_waiters_.size()), std::memory_order_release);
    }
    complete_drained();  // the operations may all have ended already
  }

  void flush(int target) {
    const auto cut = in_flight_.cut(target);
    s_.wait([&] { return in_flight_.drained(target, cut); });
    // Every notification begun before the flush is posted by now.
    const std::uint64_t sent = marks_[target].sent.load(std::memory_order_acquire);
    s_.wait([&] { return marks_[target].acked.load(std::memory_order_acquire) >= sent; });
    raise_if_failed();
  }

  void flush_all() {
    std::vector<InFlight::Token> cuts(static_cast<std::size_t>(s_.nranks));
    for (int r = 0; r < s_.nranks; ++r) cuts[r] = in_flight_.cut(r);
    s_.wait([&] {
      for (int r = 0; r < s_.nranks; ++r)
        if (!in_flight_.drained(r, cuts[r])) return false;
      return true;
    });
    std::vector<std::uint64_t> sent(static_cast<std::size_t>(s_.nranks));
    for (int r = 0; r < s_.nranks; ++r) sent[r] = marks_[r].sent.load(std::memory_order_acquire);
    s_.wait([&] {
      for (int r = 0; r < s_.nranks; ++r)
        if (marks_[r].acked.load(std::memory_order_acquire) < sent[r]) return false;
      return true;
    });
    raise_if_failed();
  }

  // Whether any operation or notification has not ended yet, or a
  // notification posted has not been acknowledged: something may still
  // arrive that completes here (a thread dropping the window asks).
  bool in_flight() const {
    for (int r = 0; r < targets_; ++r) {
      if (!in_flight_.drained(r, in_flight_.cut(r))) return true;
      if (marks_[r].acked.load(std::memory_order_acquire) < marks_[r].sent.load(std::memory_order_acquire))
        return true;
    }
    return false;
  }

  // A NotifyDone from `target` (window/target.cpp): its oldest
  // unacknowledged notification has been counted there. The header's token
  // is the InFlightOps that sent it.
  static void on_notify_done(const Header& h, int target) {
    auto* self = reinterpret_cast<InFlightOps*>(h.token);
    Marks& m = self->marks_[target];
    RequestPtr request;
    {
      std::lock_guard lk(m.ack_mutex);
      if (m.unacked.empty()) return;  // not one of ours: ignore
      request = std::move(m.unacked.front());
      m.unacked.pop_front();
    }
    m.acked.fetch_add(1, std::memory_order_release);
    if (request) request->complete(nullptr);
  }

 private:
  static constexpr std::size_t kMaxSpare = 256;

  void done(Op* op, const char* error) {
    // Counted from before the op's end (sequenced before the release that
    // ends it, or the request's completion) to after the last touch of
    // this object, for the destructor: whoever learns of the end may free
    // the window while this thread still unlocks the slot mutex, completes
    // drain waiters or posts notifications here.
    completing_.fetch_add(1, std::memory_order_relaxed);
    const int target = op->target;
    const RequestPtr request = std::move(op->request);
    op->keep.reset();  // released before anyone can take the op again
    op->result = nullptr;
    op->bytes = 0;
    op->gathered = false;
    // The op goes back under the same hold of the slot mutex that ends it.
    end(target, op->token, error, request, op);
    // seq_cst, as the push in notify_after: either this sees its mark, or
    // its post_ready sees this operation ended.
    if (marks_[target].waiting.load(std::memory_order_seq_cst) > 0) post_ready(target);
    completing_.fetch_sub(1, std::memory_order_release);
  }

  void end(int target, InFlight::Token token, const char* error, const RequestPtr& request, Op* op = nullptr) {
    if (error) {
      std::lock_guard lk(error_mutex_);
      if (first_error_.empty()) first_error_ = error;
      failed_.store(true, std::memory_order_release);
    }
    if (request) request->complete(error);
    Op* extra = nullptr;
    in_flight_.end(target, token, [&] {
      if (!op) return;
      if (spare_[target].size() < kMaxSpare)
        spare_[target].push_back(op);
      else
        extra = op;
    });
    delete extra;
    if (n_drain_waiters_.load(std::memory_order_acquire) > 0) complete_drained();
  }

  struct DrainWaiter {
    int target;                        // < 0: every target
    std::vector<InFlight::Token> cuts;  // one per target it covers
    RequestPtr request;
  };

  bool drained(const DrainWaiter& w) {
    for (std::size_t i = 0; i < w.cuts.size(); ++i)
      if (!in_flight_.drained(w.target < 0 ? static_cast<int>(i) : w.target, w.cuts[i])) return false;
    return true;
  }

  // Completes (once: it is removed under the lock first) each drain waiter
  // whose operations have all ended. A failure is not reported here: the
  // flush the caller makes next raises it.
  void complete_drained() {
    std::vector<RequestPtr> ready;
    {
      std::lock_guard lk(drain_mutex_);
      std::erase_if(drain_waiters_, [&](const DrainWaiter& w) {
        if (!drained(w)) return false;
        ready.push_back(w.request);
        return true;
      });
      n_drain_waiters_.store(static_cast<int>(drain_waiters_.size()), std::memory_order_release);
    }
    for (auto& r : ready) r->complete(nullptr);
  }

  // Posts the notifications to `target` whose operations have all ended,
  // in call order.
  void post_ready(int target) {
    Marks& m = marks_[target];
    std::lock_guard lk(m.mutex);
    while (!m.queue.empty() && in_flight_.drained(target, m.queue.front().cut)) {
      const Mark mark = std::move(m.queue.front());
      m.queue.pop_front();
      m.waiting.fetch_sub(1, std::memory_order_seq_cst);
      std::string error;
      if (failed_.load(std::memory_order_acquire)) {
        error = "notification not sent: an operation it follows failed";
      } else {
        Header h = s_.header(MsgKind::Notify, target, reinterpret_cast<std::uint64_t>(this));
        h.count = mark.index;
        {
          std::lock_guard ack(m.ack_mutex);
          m.unacked.push_back(mark.request);  // completed by the acknowledgement
        }
        m.sent.fetch_add(1, std::memory_order_release);
        try {
          s_.send(target, h);
        } catch (const std::exception& e) {
          // Never acknowledged: take it back (it is the last one, posted
          // under m.mutex), so a flush raises the error instead of waiting.
          error = e.what();
          std::lock_guard ack(m.ack_mutex);
          m.unacked.pop_back();
          m.sent.fetch_sub(1, std::memory_order_release);
        }
      }
      // Posted: the notification no longer holds back operations or later
      // notifications (message order keeps those behind it).
      end(target, mark.token, error.empty() ? nullptr : error.c_str(), error.empty() ? nullptr : mark.request);
    }
  }

  void raise_if_failed() {
    if (!failed_.load(std::memory_order_acquire)) return;
    // A provider error is most often a peer's death (its connection reset):
    // say which rank and host, when a peer is gone, rather than the errno.
    detail::name_the_cause([this] { s_.check_peers(); });
    std::lock_guard lk(error_mutex_);
    std::string e = first_error_;
    first_error_.clear();
    failed_.store(false, std::memory_order_relaxed);
    raise(ErrorCategory::Transport, "an RMA operation failed: " + e);
  }

  struct Mark {
    InFlight::Token cut;    // operations to wait for: those numbered below it
    InFlight::Token token;  // the notification's own, ended once posted
    std::uint32_t index;
    RequestPtr request;
  };
  struct Marks {
    std::mutex mutex;
    std::deque<Mark> queue;  // guarded by mutex, in call order
    std::atomic<int> waiting{0};
    std::atomic<std::uint64_t> sent{0}, acked{0};
    std::mutex ack_mutex;
    std::deque<RequestPtr> unacked;  // guarded by ack_mutex, in send order
  };

  WindowState& s_;
  InFlight in_flight_;
  std::unique_ptr<Marks[]> marks_;
  std::mutex error_mutex_;
  std::atomic<bool> failed_{false};
  std::string first_error_;  // guarded by error_mutex_
  std::mutex drain_mutex_;
  std::vector<DrainWaiter> drain_waiters_;  // guarded by drain_mutex_
  std::atomic<int> n_drain_waiters_{0};     // its size, read without the lock
  std::unique_ptr<std::vector<Op*>[]> spare_;  // per target, guarded by in_flight_'s slot mutex
  const int targets_;
  // Threads inside done(): incremented and decremented by each completing
  // thread, read (acquire) by the destructor only.
  std::atomic<int> completing_{0};
};

// accumulate_ordering where the provider does not keep it (order_tracker.hpp):
// a later accumulate-style op waits until the earlier overlapping ops it
// must follow have completed. Made only for windows whose native atomics
// may not keep some required order.
class OrderKeeper {
 public:
  OrderKeeper(WindowState& s, InFlightOps& ops) : s_(s), ops_(ops), tracker_(s.nranks) {}

  void wait_for_earlier(int target, const Access& a) {
    auto earlier = tracker_.before(s_.rule, target, a, [&](InFlight::Token t) { return ops_.pending(target, t); });
    if (earlier.empty()) return;
    s_.wait([&] {
      for (auto t : earlier)
        if (ops_.pending(target, t)) return false;
      return true;
    });
  }
  void record(int target, InFlight::Token token, const Access& a) { tracker_.record(target, token, a); }

 private:
  WindowState& s_;
  InFlightOps& ops_;
  OrderTracker tracker_;
};

// How one dtype's accumulate-style ops reach the target on the provider
// path: native_atomics.cpp or software_atomics.cpp, chosen per dtype at
// creation (state.plan), so the two never act on the same memory.
class AtomicRoute {
 public:
  virtual ~AtomicRoute() = default;
  virtual void apply(const Where& w, const AtomicCall& call, const Access& a, const RequestPtr& request) = 0;
};

}  // namespace onesided::detail
