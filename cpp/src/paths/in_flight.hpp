// Operations in flight per target, so that Flush waits for exactly those
// issued before it, even while other threads keep issuing, other threads
// flush at the same time, and completions arrive out of order (a plain
// issued/completed count would let a later completion stand in for an
// earlier, still pending, operation).
//
// Every operation gets the next sequence number of its target; a flush
// notes the next number to be handed out (its cut) and waits until no
// operation numbered below the cut is still outstanding.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <set>

namespace onesided::detail {

class InFlight {
 public:
  using Token = std::uint64_t;

  explicit InFlight(int targets) : slots_(new Slot[static_cast<std::size_t>(targets)]) {}

  // Registers an operation; its completion must call end() with the token.
  Token begin(int target) {
    Slot& s = slots_[target];
    std::lock_guard lk(s.mutex);
    const Token t = s.next++;
    s.outstanding.insert(s.outstanding.end(), t);
    return t;
  }
  void end(int target, Token token) {
    Slot& s = slots_[target];
    std::lock_guard lk(s.mutex);
    s.outstanding.erase(token);
  }

  // True while the operation `token` to `target` has not ended.
  bool pending(int target, Token token) {
    Slot& s = slots_[target];
    std::lock_guard lk(s.mutex);
    return s.outstanding.count(token) != 0;
  }

  // drained(target, cut(target)) holds once every operation begun before
  // the cut has ended.
  Token cut(int target) {
    Slot& s = slots_[target];
    std::lock_guard lk(s.mutex);
    return s.next;
  }
  bool drained(int target, Token cut) {
    Slot& s = slots_[target];
    std::lock_guard lk(s.mutex);
    return s.outstanding.empty() || *s.outstanding.begin() >= cut;
  }

 private:
  struct Slot {
    std::mutex mutex;
    Token next = 0;
    std::set<Token> outstanding;
  };
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace onesided::detail
