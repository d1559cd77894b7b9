// Nasty mode (nasty.hpp): a wrapper around any data path that holds every
// operation back until the latest point at which it must complete, then
// issues the held ones in a random order that keeps only what onesided
// guarantees.
//
// Invariants:
//  - Memory touched: none of its own; the inner path's, when a held
//    operation is released. Origin buffers and results are used only then
//    (which is what exposes a program that reuses them too early).
//  - Locks: release_mutex_ serialises releases, so a flush never returns
//    while another thread is still issuing operations it covers, and each
//    thread's held ops are issued in an order the rule allows.
//  - Order: accumulate-style ops from one thread to overlapping bytes keep
//    the window's required accumulate_ordering pairs; everything else is
//    shuffled. Each released op completes before the next is issued, so
//    the order chosen is the order they take effect.
//  - Completion: flush(t), flush_all() and a Request's Wait/Test release
//    what they cover, then flush the inner path.
//  - Notification: notify(t) releases what is held for t (the operations
//    it must follow), then notifies through the inner path at once, so a
//    target waiting for the notification never waits for the origin's
//    next synchronisation.
#include <functional>
#include <mutex>
#include <thread>

#include "order/nasty.hpp"
#include "paths/paths.hpp"

namespace onesided::detail {
namespace {

class NastyPath final : public DataPath {
 public:
  NastyPath(std::unique_ptr<DataPath> inner, WindowState& s, std::uint64_t seed)
      : inner_(std::move(inner)),
        s_(s),
        queue_(seed, s.rank),
        name_("nasty(" + inner_->name() + ")"),
        description_("nasty mode (seed " + std::to_string(seed) +
                     "): every op held until it must complete, then issued in a random legal order; "
                     "underneath: " + inner_->description()),
        hook_(std::make_shared<Hook>()) {
    hook_->path = this;
  }
  ~NastyPath() override {
    std::lock_guard lk(hook_->mutex);
    hook_->path = nullptr;
  }

  const std::string& name() const override { return name_; }
  const std::string& description() const override { return description_; }
  bool completes_in_call() const override { return false; }
  bool incoming_needs_polls() const override { return inner_->incoming_needs_polls(); }
  // Operations still held here were never posted: only the inner path's count.
  bool in_flight() const override { return inner_->in_flight(); }
  std::string ordering() const override { return inner_->ordering(); }

  void put(const Where& w, const void* origin, std::size_t bytes, const RequestPtr& request) override {
    hold(w.target, false, {}, request, [=, this] { inner_->put(w, origin, bytes, request); });
  }
  void get(const Where& w, void* result, std::size_t bytes, const RequestPtr& request) override {
    hold(w.target, false, {}, request, [=, this] { inner_->get(w, result, bytes, request); });
  }
  void accumulate(const Where& w, const AtomicCall& call, const RequestPtr& request) override {
    const Access a = access_of(w, call, s_.plan.path(call.dtype).native);
    hold(w.target, true, a, request, [=, this] { inner_->accumulate(w, call, request); });
  }
  void flush(int target) override {
    release(target);
    inner_->flush(target);
  }
  void flush_all() override {
    release(-1);
    inner_->flush_all();
  }
  void complete_when_drained(int target, const RequestPtr& request) override {
    release(target);
    inner_->complete_when_drained(target, request);
  }
  void expect_incoming(int delta) override { inner_->expect_incoming(delta); }
  void notify(int target, std::size_t index, const RequestPtr& request) override {
    release(target);
    inner_->notify(target, index, request);
  }
  std::string notification() const override { return inner_->notification(); }

 private:
  // What a Request reaches this path through; cut when the path goes.
  struct Hook {
    std::mutex mutex;
    NastyPath* path = nullptr;
  };

  // A held operation counts against its request so Wait and Test see it.
  void hold(int target, bool accumulate, const Access& access, const RequestPtr& request,
            std::function<void()> post) {
    if (request) {
      request->pending.fetch_add(1, std::memory_order_relaxed);
      if (!request->release_held)
        request->release_held = [hook = hook_, target] {
          std::lock_guard lk(hook->mutex);
          if (hook->path) hook->path->release(target);
        };
    }
    queue_.hold({target, std::this_thread::get_id(), accumulate, access, [post = std::move(post), request] {
                   try {
                     post();
                   } catch (const std::exception& e) {
                     if (request) request->complete(e.what());
                     throw;
                   }
                   if (request) request->complete(nullptr);
                 }});
  }

  // Issues the held operations to `target` (every target when negative),
  // each complete before the next. A failure does not stop the others
  // (their requests would never complete); the first is rethrown.
  void release(int target) {
    std::lock_guard serial(release_mutex_);
    std::exception_ptr first;
    for (auto& op : queue_.release(target, s_.rule)) {
      try {
        op.post();
        inner_->flush(op.target);
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    if (first) std::rethrow_exception(first);
  }

  std::unique_ptr<DataPath> inner_;
  WindowState& s_;
  NastyQueue queue_;
  std::string name_, description_;
  std::shared_ptr<Hook> hook_;
  std::mutex release_mutex_;
};

}  // namespace

std::unique_ptr<DataPath> nasty_path(std::unique_ptr<DataPath> inner, WindowState& state, std::uint64_t seed) {
  return std::make_unique<NastyPath>(std::move(inner), state, seed);
}

}  // namespace onesided::detail
