// Operations in flight per target, so that Flush waits for exactly those
// issued before it, even while other threads keep issuing, other threads
// flush at the same time, and completions arrive out of order (a plain
// issued/completed count would let a later completion stand in for an
// earlier, still pending, operation).
//
// Every operation gets the next sequence number of its target; a flush
// notes the next number to be handed out (its cut) and waits until no
// operation numbered below the cut is still outstanding.
//
// Per target, the numbers from `low` (the oldest operation not yet ended)
// to `next` have one flag each, ended or not, in issue order; when the
// oldest ends, `low` moves past every ended one. So "drained up to the cut"
// is `low >= cut`: one atomic load, no lock, which a flush polls in its
// loop. No allocation per operation (the flags' deque reuses its blocks).
//
// begin() and end() run a caller's `also` under the same hold of the
// slot's mutex, so bookkeeping kept per target (InFlightOps' spare
// operations) costs no lock round of its own.
//
// Who writes what: the flags, `low` and `next` are written under the
// slot's mutex; `low` and `next` are also read without it (acquire: the
// release that moved `low` past an operation comes after everything its
// completion did, and a thread's own begin() is visible to its cut()).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>

namespace onesided::detail {

class InFlight {
 public:
  using Token = std::uint64_t;

  explicit InFlight(int targets) : slots_(new Slot[static_cast<std::size_t>(targets)]) {}

  // Registers an operation; its completion must call end() with the token.
  template <class Also>
  Token begin(int target, Also&& also) {
    Slot& s = slots_[target];
    std::lock_guard lk(s.mutex);
    also();
    const Token t = s.next.load(std::memory_order_relaxed);
    s.ended.push_back(0);
    s.next.store(t + 1, std::memory_order_release);
    return t;
  }
  Token begin(int target) {
    return begin(target, [] {});
  }
  template <class Also>
  void end(int target, Token token, Also&& also) {
    Slot& s = slots_[target];
    std::lock_guard lk(s.mutex);
    also();
    Token low = s.low.load(std::memory_order_relaxed);
    s.ended[token - low] = 1;
    while (!s.ended.empty() && s.ended.front()) {
      s.ended.pop_front();
      ++low;
    }
    s.low.store(low, std::memory_order_release);
  }
  void end(int target, Token token) {
    end(target, token, [] {});
  }

  // True while the operation `token` to `target` has not ended.
  bool pending(int target, Token token) {
    Slot& s = slots_[target];
    std::lock_guard lk(s.mutex);
    const Token low = s.low.load(std::memory_order_relaxed);
    return token >= low && !s.ended[token - low];
  }

  // drained(target, cut(target)) holds once every operation begun before
  // the cut has ended.
  Token cut(int target) const { return slots_[target].next.load(std::memory_order_acquire); }
  bool drained(int target, Token cut) const { return slots_[target].low.load(std::memory_order_acquire) >= cut; }

 private:
  struct Slot {
    std::mutex mutex;
    std::atomic<Token> next{0}, low{0};
    std::deque<std::uint8_t> ended;  // guarded by mutex: tokens low .. next-1
  };
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace onesided::detail
