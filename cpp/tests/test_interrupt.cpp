// The interrupt hook (onesided/interrupt.hpp): a wait that cannot end on
// its own (a notification that never comes, a Complete with no Post, in a
// world of one) throws Error(Interrupted) once the hook says stop, asks it
// no sooner than kInterruptCheck into the wait, and leaves the window
// usable; a wait that ends at once never asks; deferred scopes are not cut.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>

#include "onesided/bootstrap.hpp"
#include "onesided/error.hpp"
#include "onesided/interrupt.hpp"
#include "onesided/window.hpp"

using namespace onesided;

namespace {

std::atomic<int> asked{0};
int stop_after = 0;  // the hook says stop on this call (0: never)

bool counting_hook() { return ++asked == stop_after; }

// Sets the hook for one test and clears it after, whatever happens.
struct Hooked {
  explicit Hooked(int stop) {
    asked = 0;
    stop_after = stop;
    set_interrupt_hook(&counting_hook);
  }
  ~Hooked() { set_interrupt_hook(nullptr); }
};

std::unique_ptr<Window> notified_window() {
  return Window::allocate(64, 8, Info{{"onesided_notifications", "1"}}, std::make_shared<SelfBootstrap>());
}

ErrorCategory category_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.category();
  }
  ADD_FAILURE() << "the call returned";
  return ErrorCategory::Internal;
}

}  // namespace

TEST(Interrupt, WaitNotifyThrowsInterruptedWhenTheHookSaysStop) {
  auto win = notified_window();
  Hooked hook(3);
  const auto began = std::chrono::steady_clock::now();
  EXPECT_EQ(category_of([&] { win->wait_notify(0, 1); }), ErrorCategory::Interrupted);
  // Asked three times, each kInterruptCheck apart, the first one after that long.
  EXPECT_EQ(asked.load(), 3);
  EXPECT_GE(std::chrono::steady_clock::now() - began, 3 * kInterruptCheck);
  // Nothing was consumed: a notification now ends the same wait at once.
  win->lock_all();
  win->notify(0, 0);
  win->unlock_all();
  win->wait_notify(0, 1);
  win->free();
}

TEST(Interrupt, CompleteWaitingForPostThrowsAndCanBeRepeated) {
  auto win = Window::allocate(64, 8, Info{}, std::make_shared<SelfBootstrap>());
  win->start({0}, 0);
  {
    Hooked hook(1);
    EXPECT_EQ(category_of([&] { win->complete(); }), ErrorCategory::Interrupted);
  }
  // The access epoch is still open: with the Post here, Complete ends it.
  win->post({0}, 0);
  win->complete();
  win->wait();
  win->free();
}

TEST(Interrupt, AWaitThatEndsAtOnceNeverAsks) {
  auto win = notified_window();
  Hooked hook(1);
  win->lock_all();
  win->notify(0, 0);
  win->unlock_all();
  win->wait_notify(0, 1);
  win->fence(0);
  win->free();
  EXPECT_EQ(asked.load(), 0);
}

TEST(Interrupt, DeferredScopesAreNotInterrupted) {
  Hooked hook(1);
  {
    InterruptsDeferred deferred;
    check_interrupt();  // would throw outside the scope
  }
  EXPECT_EQ(asked.load(), 0);
  EXPECT_EQ(category_of([] { check_interrupt(); }), ErrorCategory::Interrupted);
}
