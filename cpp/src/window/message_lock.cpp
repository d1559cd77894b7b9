// Window locks reached by messages: each rank's lock is the LockTable at
// that rank, which its progress engine serves.
//
// Invariants:
//  - Memory touched: the target's table_ and tokens_, under table_mutex_,
//    by the target's progress thread (messages) or by the owning rank's own
//    calling thread (its own lock); an origin's wait flag, by the reply.
//  - Grants are FIFO (lock_table.hpp). A flag carries the grant: it is
//    stored with release and waited on with acquire, so the holder's
//    operations happen after the grant.
//  - Unlock's release is sent only after the origin's operations to that
//    target are complete (passive.cpp flushes first).
#include <atomic>
#include <mutex>
#include <span>
#include <vector>

#include "locks/lock_table.hpp"
#include "window/window_lock.hpp"

namespace onesided::detail {
namespace {

class MessageLock final : public WindowLock {
 public:
  MessageLock(WindowState& s, DataPath& path)
      : s_(s), path_(path), tokens_(static_cast<std::size_t>(s.nranks), 0) {}

  const char* where() const override { return "messages to the target's progress engine"; }

  // The grant and release flags are the window's, not the waiting frame's:
  // a wait that is interrupted leaves its request in line and its reply
  // still to come, and release() first waits for a grant still owed.
  void acquire(int target, bool exclusive) override {
    request(target, exclusive, &granted_[target]);
    await({&granted_[target], 1});
  }
  void release(int target, bool) override {
    await({&granted_[target], 1});
    request_release(target, &released_[target]);
    await({&released_[target], 1});
  }
  // Every target asked at once, then every answer awaited.
  void acquire_all() override {
    for (int r = 0; r < s_.nranks; ++r) request(r, false, &granted_[r]);
    await(granted_);
  }
  void release_all() override {
    await(granted_);
    for (int r = 0; r < s_.nranks; ++r) request_release(r, &released_[r]);
    await(released_);
  }

  void on_message(const Header& h) override {
    const int origin = static_cast<int>(h.origin);
    switch (h.kind) {
      case MsgKind::Lock: {
        path_.expect_incoming(+1);
        bool granted;
        {
          std::lock_guard lk(table_mutex_);
          granted = table_.acquire(origin, h.flags & kExclusive);
          if (!granted) tokens_[origin] = h.token;
        }
        if (granted) grant(origin, h.token);
        return;
      }
      case MsgKind::Unlock:
        path_.expect_incoming(-1);
        release_here(origin);
        s_.send(origin, s_.header(MsgKind::UnlockDone, origin, h.token));
        return;
      case MsgKind::LockGranted:
      case MsgKind::UnlockDone:
        reinterpret_cast<std::atomic<int>*>(h.token)->store(1, std::memory_order_release);
        return;
      default:
        return;
    }
  }

 private:
  void await(std::span<std::atomic<int>> flags) {
    const auto all = [&] {
      for (auto& f : flags)
        if (f.load(std::memory_order_acquire) == 0) return false;
      return true;
    };
    // A grant already here (release()'s usual case) enters no wait.
    if (!all()) s_.wait(all);
  }

  void request(int target, bool exclusive, std::atomic<int>* flag) {
    flag->store(0, std::memory_order_relaxed);
    const auto token = reinterpret_cast<std::uint64_t>(flag);
    if (target == s_.rank) {
      std::lock_guard lk(table_mutex_);
      if (table_.acquire(s_.rank, exclusive))
        flag->store(1, std::memory_order_release);
      else
        tokens_[s_.rank] = token;
      return;
    }
    s_.send(target, s_.header(MsgKind::Lock, target, token, exclusive ? kExclusive : 0));
  }

  void request_release(int target, std::atomic<int>* flag) {
    flag->store(0, std::memory_order_relaxed);
    if (target == s_.rank) {
      release_here(s_.rank);
      flag->store(1, std::memory_order_release);
      return;
    }
    s_.send(target, s_.header(MsgKind::Unlock, target, reinterpret_cast<std::uint64_t>(flag)));
  }

  // Releases origin's hold on this rank's lock and tells the newly granted.
  void release_here(int origin) {
    std::vector<std::pair<int, std::uint64_t>> grants;
    {
      std::lock_guard lk(table_mutex_);
      for (int o : table_.release(origin)) grants.emplace_back(o, tokens_[o]);
    }
    for (auto [o, token] : grants) grant(o, token);
  }

  void grant(int origin, std::uint64_t token) {
    if (origin == s_.rank)
      reinterpret_cast<std::atomic<int>*>(token)->store(1, std::memory_order_release);
    else
      s_.send(origin, s_.header(MsgKind::LockGranted, origin, token));
  }

  WindowState& s_;
  DataPath& path_;
  std::mutex table_mutex_;
  LockTable table_;                     // guarded by table_mutex_
  std::vector<std::uint64_t> tokens_;   // origin -> its queued request's token; guarded by table_mutex_
  // Per target, this rank's last lock request granted / unlock answered
  // (their addresses are the tokens the replies carry).
  std::vector<std::atomic<int>> granted_ = std::vector<std::atomic<int>>(static_cast<std::size_t>(s_.nranks));
  std::vector<std::atomic<int>> released_ = std::vector<std::atomic<int>>(static_cast<std::size_t>(s_.nranks));
};

}  // namespace

std::unique_ptr<WindowLock> message_lock(WindowState& state, DataPath& path) {
  return std::make_unique<MessageLock>(state, path);
}

}  // namespace onesided::detail
