// What a window tells an observer of its synchronisation: the race
// checker (races/race_log.hpp) when the window checks, else an object that
// does nothing. Chosen once at creation (window/create.cpp); each hook is
// one virtual call in a synchronisation call, none in an operation. Here,
// below races/ and window/, because the one implements it and the other
// calls it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace onesided::detail {

class EpochEvents {
 public:
  virtual ~EpochEvents() = default;
  // Collective, in Fence after its flush and before its barrier.
  virtual void fencing() {}
  virtual void started(const std::vector<bool>& /*group*/) {}
  // In Complete, after the flush to `target`, before the Complete message
  // (which the target receives after anything sent to it here).
  virtual void completing(int /*target*/) {}
  // This rank's exposure epoch ended (Wait, or a Test that said yes).
  virtual void exposure_ended() {}
  virtual void locked(int /*target*/, bool /*exclusive*/) {}
  virtual void locked_all() {}
  // In Unlock and Unlock_all, after their flush, before the lock goes.
  virtual void unlocking(int /*target*/) {}
  virtual void unlocking_all() {}
  // A Races message's payload from `origin`, and a target's answer that it
  // took one (progress thread).
  virtual void received(int /*origin*/, const std::byte* /*payload*/, std::size_t /*len*/) {}
  virtual void acknowledged() {}
  // Collective, in Free before its barrier.
  virtual void freeing() {}
  // At the end of a synchronisation call, on the caller's thread: tells
  // what was found since the last time (a warning, or an exception).
  virtual void report() {}
};

inline std::shared_ptr<EpochEvents> no_epoch_events() { return std::make_shared<EpochEvents>(); }

}  // namespace onesided::detail
