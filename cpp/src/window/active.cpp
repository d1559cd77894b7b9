// Active-target synchronisation (Fence; Post, Start, Complete, Wait, Test)
// and Free. Post and Complete travel as messages (target.cpp counts them
// into posts_ and completes_); Start never blocks: an operation to a
// target waits for that target's Post, so Start-before-Post rings cannot
// deadlock.
#include <atomic>

#include "window/impl.hpp"

namespace onesided {

using namespace detail;

// MODE_NOSTORE, MODE_NOPUT and MODE_NOPRECEDE are hints onesided does
// not need (it flushes and synchronises anyway; nothing is cached), so
// they are safely ignored; MODE_NOSUCCEED ends fence epochs.
void Window::Impl::fence(unsigned assertion) {
  s.check_live();
  {
    std::lock_guard lk(epochs.mutex);
    epochs.state.on_fence(assertion);
  }
  flush_all();
  events->fencing();
  // Local stores before the fence and RMA updates completed by it are
  // visible on the other side of it: stores into memory other processes
  // map through this rank's publication word, published before the barrier
  // and taken after it (memory/publication.hpp); what this process's
  // progress delivered through observe().
  s.publication.publish();
  s.group->barrier();
  s.publication.take();
  s.observe();
  addressing->epoch_started();
  events->report();
}

std::vector<bool> Window::Impl::group_mask(const std::vector<int>& ranks) const {
  std::vector<bool> mask(static_cast<std::size_t>(s.nranks), false);
  for (int r : ranks) {
    s.check_rank(r);
    if (mask[r]) raise(ErrorCategory::Argument, "rank " + std::to_string(r) + " appears twice in the group");
    mask[r] = true;
  }
  return mask;
}

void Window::Impl::post(const std::vector<int>& ranks) {
  s.check_live();
  const auto mask = group_mask(ranks);
  {
    std::lock_guard lk(epochs.mutex);
    epochs.state.on_post(mask);
  }
  // Local stores before Post are visible to the origins' RMA after it:
  // the origins learn of Post by a message and take the publication when
  // they match it (match_post).
  s.publication.publish();
  path->expect_incoming(+1);
  for (int o = 0; o < s.nranks; ++o) {
    if (!mask[o]) continue;
    if (o == s.rank)
      posts_[o].fetch_add(1, std::memory_order_release);
    else
      s.send(o, s.header(MsgKind::Post, o));
  }
}

void Window::Impl::start(const std::vector<int>& ranks) {
  s.check_live();
  const auto mask = group_mask(ranks);
  {
    std::lock_guard lk(epochs.mutex);
    epochs.state.on_start(mask);
    std::fill(epochs.post_matched.begin(), epochs.post_matched.end(), 0);
  }
  events->started(mask);
  addressing->epoch_started();
}

// Waits for `target`'s Post of this access epoch and consumes it.
void Window::Impl::match_post(int target) {
  s.wait([&] { return posts_[target].load(std::memory_order_acquire) > 0; });
  s.publication.take();  // the target's stores before its Post
  std::lock_guard lk(epochs.mutex);
  if (epochs.post_matched[target]) return;
  posts_[target].fetch_sub(1, std::memory_order_acq_rel);
  epochs.post_matched[target] = 1;
}

void Window::Impl::complete() {
  s.check_live();
  std::vector<bool> group;
  {
    std::lock_guard lk(epochs.mutex);
    if (!epochs.state.started()) epochs.state.on_complete();  // raises: no Start
    group = epochs.state.start_group();
  }
  // A Complete interrupted while it waits (for a Post, or a flush) leaves
  // the epoch open; called again, it skips the targets it completed.
  for (int t = 0; t < s.nranks; ++t) {
    if (!group[t]) continue;
    std::uint8_t matched;
    {
      std::lock_guard lk(epochs.mutex);
      matched = epochs.post_matched[t];
    }
    if (matched == Epochs::kCompleted) continue;
    if (!matched) match_post(t);
    flush(t);
    events->completing(t);
    s.publication.publish();  // taken by the target's Wait or Test
    if (t == s.rank)
      completes_[t].fetch_add(1, std::memory_order_release);
    else
      s.send(t, s.header(MsgKind::Complete, t));
    std::lock_guard lk(epochs.mutex);
    epochs.post_matched[t] = Epochs::kCompleted;
  }
  {
    std::lock_guard lk(epochs.mutex);
    epochs.state.on_complete();
  }
  events->report();
}

bool Window::Impl::completes_arrived(const std::vector<bool>& group) const {
  for (int o = 0; o < s.nranks; ++o)
    if (group[o] && completes_[o].load(std::memory_order_acquire) == 0) return false;
  return true;
}

void Window::Impl::end_exposure(const std::vector<bool>& group) {
  for (int o = 0; o < s.nranks; ++o)
    if (group[o]) completes_[o].fetch_sub(1, std::memory_order_acq_rel);
  path->expect_incoming(-1);
  // The origins' updates are visible to local loads after Wait: theirs
  // (memory other processes store to, published by their Complete) and
  // what progress delivered here.
  s.publication.take();
  s.observe();
  events->exposure_ended();
  {
    std::lock_guard lk(epochs.mutex);
    epochs.state.on_wait_done();
  }
  events->report();
}

// Wait and Test: the origins of the open exposure epoch (raises without one).
std::vector<bool> Window::Impl::exposure_group() {
  s.check_live();
  std::lock_guard lk(epochs.mutex);
  epochs.state.check_wait();
  return epochs.state.post_group();
}

void Window::Impl::wait() {
  const auto group = exposure_group();
  s.wait([&] { return completes_arrived(group); });
  end_exposure(group);
}

bool Window::Impl::test() {
  const auto group = exposure_group();
  // poll_whole: the background thread may be dispatching the last Complete
  // right now; a poll that skipped its round would answer no (mpi4py's
  // testStartCompletePostTest, after a barrier that follows Complete).
  if (!completes_arrived(group)) s.endpoint->progress().poll_whole();
  if (!completes_arrived(group)) return false;
  end_exposure(group);
  return true;
}

void Window::Impl::free() {
  // A window whose peer died cannot complete or synchronise: Free releases
  // this rank's part and says why it could not do more.
  if (const int r = s.dead_rank.load(std::memory_order_acquire); r >= 0 && !s.freed) {
    release();
    s.raise_dead(r);
  }
  s.check_live();
  {
    std::lock_guard lk(epochs.mutex);
    epochs.state.check_free();
  }
  // Nobody may still target this rank's memory once it is released. A
  // Free interrupted in its flush or barrier releases this rank's part all
  // the same: the window cannot be synchronised again (its peers may be in
  // the barrier), and its memory must not outlive the Python object.
  try {
    flush_all();
    events->freeing();
    s.group->barrier();
  } catch (...) {
    release();
    throw;
  }
  release();
  events->report();
}

void Window::fence(unsigned assertion) { impl_->fence(assertion); }
void Window::post(const std::vector<int>& group, unsigned) { impl_->post(group); }
void Window::start(const std::vector<int>& group, unsigned) { impl_->start(group); }
void Window::complete() { impl_->complete(); }
void Window::wait() { impl_->wait(); }
bool Window::test() { return impl_->test(); }
void Window::free() { impl_->free(); }
// MPI_Win_sync: the window's public and private copies agree (one copy
// here: the unified model), so only memory order remains to be given. It
// rides on the publication words (memory/publication.hpp), whose count is
// the rank's flush generation: every Flush on the shared-memory path and
// every synchronisation call that signals (Fence, Post, Complete) releases
// this rank's word, and every one that learns (Fence, Start, Wait, Test)
// acquires every rank's. Win_sync does both in one step, as a
// read-modify-write of this rank's word that is both release and acquire,
// then acquires the others':
//  - it publishes this rank's stores before Win_sync (a release, so also
//    every earlier Flush's and synchronisation's) to whichever rank's later
//    Win_sync or synchronisation call reads this increment or a later one;
//  - it takes every rank's stores before the increment its loads read, for
//    this rank's loads after Win_sync.
// Which increment a taker reads is settled by the user's own channel (a
// barrier, an atomic, a flag in the window polled with Win_sync in the
// loop). For the last, a plain store and load, the C++ model promises
// nothing (it is a data race there); the processors onesided runs on make
// such a read-modify-write a full barrier (x86-64's locked instructions,
// AArch64's LSE atomics with acquire and release), which is MPI's memory
// barrier. No standalone fence: ThreadSanitizer sees every order given.
void Window::sync() {
  auto& s = impl_->s;
  // Where RMA arrives only as this process polls (provider paths), a loop
  // of Syncs waiting for a flag is this process's progress while it goes
  // on. Not after Free, nor in a child made by fork() (the provider's
  // queues are the parent's): Sync stays the plain barrier it is there.
  if (impl_->path->incoming_needs_polls() && !s.freed.load(std::memory_order_acquire) &&
      !s.endpoint->progress().forked())
    s.endpoint->progress().poll_in_loop();
  s.publication.publish_and_take();
  s.observe();
}

}  // namespace onesided
