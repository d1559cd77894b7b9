// Passive-target synchronisation: Lock, Unlock, Lock_all, Unlock_all and
// the flushes. The epoch rules are epoch.hpp's; the lock itself is the
// window's WindowLock (shared memory or messages, chosen at creation);
// completion is the data path's.
#include "window/impl.hpp"

namespace onesided {

using namespace detail;

// MPI_PROC_NULL is a valid target of Lock, Unlock and the flushes, which
// then do nothing (MPI-3.1 11.5.3).
void Window::Impl::flush(int target) {
  s.check_live();
  if (target == kProcNull) return;
  s.check_rank(target);
  path->flush(target);
  s.observe();
}

void Window::Impl::flush_all() {
  s.check_live();
  path->flush_all();
  s.observe();
}

void Window::Impl::flush_local(int target) {
  s.check_live();
  if (target == kProcNull) return;
  s.check_rank(target);
  path->flush_local(target);
  s.observe();
}

void Window::Impl::flush_local_all() {
  s.check_live();
  path->flush_local(-1);
  s.observe();
}

bool Window::Impl::begin_lock(int target, LockType type, unsigned assertion) {
  s.check_live();
  if (target == kProcNull) return true;
  s.check_rank(target);
  const bool nocheck = (assertion & mode::kNoCheck) != 0;
  {
    std::lock_guard lk(epochs.mutex);
    epochs.state.on_lock(target);
    epochs.mirror(target);
    epochs.nocheck[target] = nocheck;
    epochs.exclusive[target] = type == LockType::Exclusive;
  }
  events->locked(target, type == LockType::Exclusive);
  addressing->epoch_started();
  if (!nocheck && !window_lock->begin_acquire(target, type == LockType::Exclusive)) return false;
  s.observe();
  return true;
}

// After a begin_lock that returned false: the epoch is open, the lock
// requested but not yet granted.
void Window::Impl::end_lock(int target) {
  bool exclusive;
  {
    std::lock_guard lk(epochs.mutex);
    exclusive = epochs.exclusive[target];
  }
  window_lock->finish_acquire(target, exclusive);
  s.observe();
}

void Window::Impl::unlock(int target) {
  s.check_live();
  if (target == kProcNull) return;
  s.check_rank(target);
  bool nocheck, exclusive;
  {
    std::lock_guard lk(epochs.mutex);
    epochs.state.on_unlock(target);
    epochs.mirror(target);
    epochs.close_handles(target);  // even if the unlock is interrupted below: take a new handle then
    nocheck = epochs.nocheck[target];
    exclusive = epochs.exclusive[target];
  }
  // A failed operation (raised by the flush) still ends the epoch: the
  // lock is released, so the window stays usable and nobody waits for it.
  // An interrupted flush does not: its operations are still in flight, so
  // the epoch stays open and the lock held (Unlock again ends it).
  try {
    flush(target);
  } catch (const Error& e) {
    if (e.category() == ErrorCategory::Interrupted) {
      std::lock_guard lk(epochs.mutex);
      epochs.state.on_lock(target);
      epochs.mirror(target);
      throw;
    }
    if (!nocheck) window_lock->release(target, exclusive);
    throw;
  } catch (...) {
    if (!nocheck) window_lock->release(target, exclusive);
    throw;
  }
  events->unlocking(target);
  if (!nocheck) window_lock->release(target, exclusive);
  s.observe();
  events->report();
}

void Window::Impl::lock_all(unsigned assertion) {
  s.check_live();
  const bool nocheck = (assertion & mode::kNoCheck) != 0;
  {
    std::lock_guard lk(epochs.mutex);
    epochs.state.on_lock_all();
    epochs.mirror_all();
    epochs.lock_all_nocheck = nocheck;
  }
  events->locked_all();
  addressing->epoch_started();
  if (!nocheck) window_lock->acquire_all();
  s.observe();
}

void Window::Impl::unlock_all() {
  s.check_live();
  bool nocheck;
  {
    std::lock_guard lk(epochs.mutex);
    epochs.state.on_unlock_all();
    epochs.mirror_all();
    epochs.close_handles_all();  // as in unlock()
    nocheck = epochs.lock_all_nocheck;
  }
  try {
    flush_all();
  } catch (const Error& e) {
    if (e.category() == ErrorCategory::Interrupted) {  // as in unlock()
      std::lock_guard lk(epochs.mutex);
      epochs.state.on_lock_all();
      epochs.mirror_all();
      throw;
    }
    if (!nocheck) window_lock->release_all();
    throw;
  } catch (...) {
    if (!nocheck) window_lock->release_all();
    throw;
  }
  events->unlocking_all();
  if (!nocheck) window_lock->release_all();
  s.observe();
  events->report();
}

void Window::lock(int target, LockType type, unsigned assertion) { impl_->lock(target, type, assertion); }
bool Window::begin_lock(int target, LockType type, unsigned assertion) {
  return impl_->begin_lock(target, type, assertion);
}
void Window::end_lock(int target) { impl_->end_lock(target); }
void Window::unlock(int target) { impl_->unlock(target); }
void Window::lock_all(unsigned assertion) { impl_->lock_all(assertion); }
void Window::unlock_all() { impl_->unlock_all(); }
void Window::flush(int target) { impl_->flush(target); }
void Window::flush_all() { impl_->flush_all(); }
// Local completion is implied by remote completion, which is what every
// path tracks; the path still hears it is a local one (data_path.hpp).
void Window::flush_local(int target) { impl_->flush_local(target); }
void Window::flush_local_all() { impl_->flush_local_all(); }

Request Window::flush_request(int target) {
  impl_->s.check_live();
  auto state = std::make_shared<RequestState>();
  if (target == kProcNull) return Request(state, impl_->s.endpoint, target, 0);
  impl_->s.check_rank(target);
  impl_->path->complete_when_drained(target, state);
  return Request(state, impl_->s.endpoint, target, impl_->s.life_of(target));
}

Request Window::flush_all_request() {
  impl_->s.check_live();
  auto state = std::make_shared<RequestState>();
  impl_->path->complete_when_drained(-1, state);
  return Request(state, impl_->s.endpoint, -1, 0);
}

}  // namespace onesided
