// Window::Impl: a window made of its concerns. Each member function is
// defined in the file of its concern:
//   create.cpp      creation: the ranks agree, then the path, lock and
//                   addressing objects are chosen, once
//   operations.cpp  the data calls: checks at the edge, then one call on the path
//   passive.cpp     Lock, Unlock, Lock_all, Unlock_all, Flush
//   active.cpp      Fence, Post, Start, Complete, Wait, Test, Free
//   target.cpp      messages arriving for this window, to the concern they are for
//   describe.cpp    Get_info's report and the memory model
//   notify.cpp      notified RMA: notify() and the counters' calls
// Shared state is in `s` (state/window_state.hpp: written at creation only);
// what changes later belongs to the object that changes it.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "onesided/interrupt.hpp"
#include "window/window_lock.hpp"
#include "paths/atomic_routes.hpp"
#include "paths/data_path.hpp"
#include "window/addressing.hpp"
#include "window/agreed.hpp"
#include "window/config.hpp"
#include "state/epoch_events.hpp"
#include "window/epochs.hpp"
#include "window/notify_counters.hpp"
#include "state/window_state.hpp"

namespace onesided {

namespace detail {
// The state behind a Request, when the caller asked for one.
inline RequestPtr request_state_for(Request* request) {
  return request ? std::make_shared<RequestState>() : nullptr;
}
}  // namespace detail

class Window::Impl final : public detail::MessageSink {
 public:
  Impl(const detail::Config& config, std::shared_ptr<Bootstrap> group, Flavor flavor, void* base,
       std::size_t size, int disp_unit, std::unique_ptr<std::byte[]> owned,
       std::shared_ptr<detail::SharedSegment> shared, detail::Agreed agreed, bool shared_memory_path,
       std::string failed);
  ~Impl();

  // operations.cpp
  void put(const void* origin, std::size_t count, Dtype dtype, int target, std::int64_t disp,
           const detail::RequestPtr& request);
  void get(void* result, std::size_t count, Dtype dtype, int target, std::int64_t disp,
           const detail::RequestPtr& request);
  void atomic(const detail::AtomicCall& call, int target, std::int64_t disp, const detail::RequestPtr& request);
  // layout_operations.cpp: put, get and the accumulate family on
  // non-contiguous data (onesided/layout.hpp). `call` gives the bases of
  // its buffers and the op; the layouts say which bytes of each.
  void put(const std::byte* origin, const Layout& origin_layout, int target, std::int64_t disp,
           const Layout& target_layout, const detail::RequestPtr& request);
  void get(std::byte* result, const Layout& result_layout, int target, std::int64_t disp,
           const Layout& target_layout, const detail::RequestPtr& request);
  void atomic(const detail::AtomicCall& call, const Layout* origin_layout, const Layout* result_layout, int target,
              std::int64_t disp, const Layout& target_layout, const detail::RequestPtr& request);
  // Seed 002's MODE_PASSIVE_EPOCH_IMPLICIT: the call is its own exclusive
  // epoch (no lock with MODE_NOCHECK) and has completed when it returns.
  template <class Call>
  void implicit_epoch(int target, unsigned assertion, Call&& call);

  // passive.cpp
  void flush(int target);
  void flush_all();
  void flush_local(int target);
  void flush_local_all();
  void lock(int target, LockType type, unsigned assertion) {
    if (!begin_lock(target, type, assertion)) end_lock(target);
  }
  bool begin_lock(int target, LockType type, unsigned assertion);
  void end_lock(int target);
  void unlock(int target);
  void lock_all(unsigned assertion);
  void unlock_all();

  // active.cpp
  void fence(unsigned assertion);
  void post(const std::vector<int>& ranks);
  void start(const std::vector<int>& ranks);
  void complete();
  void wait();
  bool test();
  void free();

  // target.cpp
  void on_message(const detail::Header& h, const std::byte* payload, std::size_t len) override;

  // notify.cpp
  void notify(int target, std::uint64_t index, const detail::RequestPtr& request);

  // describe.cpp
  Info info() const;
  Model model() const;

  detail::WindowState s;
  detail::Config config;
  detail::Epochs epochs;
  std::unique_ptr<detail::Addressing> addressing;
  std::unique_ptr<detail::DataPath> path;
  std::unique_ptr<detail::WindowLock> window_lock;
  detail::SoftwareAtomics* software = nullptr;  // the path's, if it has them (target side)
  // The race checker with onesided_check=races, else hooks that do nothing.
  std::shared_ptr<detail::EpochEvents> events = detail::no_epoch_events();
  detail::NotifyCounters notify_counters;       // this rank's (window/notify_counters.hpp)
  // epoch_handle.cpp: every rank's segment as Epoch handles reach it, set
  // at creation on the plain shared-memory path (empty elsewhere: handles
  // then forward every call). Never changes, so handles point into it.
  std::vector<Epoch::Target> epoch_targets;
  static std::vector<Epoch::Target> load_store_targets(const detail::WindowState& state);
  Epoch make_epoch(unsigned first, unsigned count, std::size_t generation);

 private:
  // create.cpp
  void negotiate(bool shared_memory_path, detail::Agreed& agreed, std::string failed);
  void release();  // local teardown, safe to call twice

  // operations.cpp: the epoch checks of an access to `target`, and the
  // checked place of a put or get.
  void access(int target);
  void check_atomic(const detail::AtomicCall& call) const;

 public:
  // Whether `f` takes `op` at all (an Argument error naming the right call if not).
  static void check_admits(Function f, Op op);

 private:
  template <class F>
  void place(std::size_t count, Dtype dtype, int target, std::int64_t disp, F&& move);
  // layout_operations.cpp: the same for a target layout's whole extent.
  std::optional<detail::Where> place(int target, std::int64_t disp, const Layout& target_layout);
  // active.cpp
  std::vector<bool> group_mask(const std::vector<int>& ranks) const;
  void match_post(int target);
  std::vector<bool> exposure_group();
  bool completes_arrived(const std::vector<bool>& group) const;
  void end_exposure(const std::vector<bool>& group);

  // Active target: Posts and Completes received from each rank, not yet
  // matched (written by the progress thread, with release; read with acquire).
  std::unique_ptr<std::atomic<int>[]> posts_, completes_;
};

template <class Call>
void Window::Impl::implicit_epoch(int target, unsigned assertion, Call&& call) {
  if (!(assertion & mode::kPassiveEpochImplicit)) return call();
  // The epoch is the call's own, and the caller has no Unlock to end it: an
  // interruption may cut the operation's wait short, never the lock's or
  // the unlock's, which would leave the epoch open.
  {
    InterruptsDeferred uninterrupted;
    lock(target, LockType::Exclusive, assertion & mode::kNoCheck);
  }
  try {
    call();
  } catch (...) {
    InterruptsDeferred uninterrupted;
    unlock(target);
    throw;
  }
  InterruptsDeferred uninterrupted;
  unlock(target);
}

}  // namespace onesided
