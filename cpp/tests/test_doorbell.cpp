// The doorbell wakes a sleeping process at once, and ringing an awake one
// costs no system call (its futex word stays untouched).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "transport/doorbell.hpp"

using onesided::detail::BellWord;
using onesided::detail::Doorbell;

TEST(Doorbell, RingWakesASleeperLongBeforeItsLimit) {
  auto* flag = static_cast<std::uint32_t*>(
      ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(flag, MAP_FAILED);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    BellWord* bell = Doorbell::own();
    if (!bell) std::_Exit(2);
    char one = 1;
    if (::write(ready[1], &one, 1) != 1) std::_Exit(3);
    const auto t0 = std::chrono::steady_clock::now();
    std::atomic_ref<std::uint32_t> f(*flag);
    // Each wait would sleep 30 s unless rung.
    while (f.load() == 0) Doorbell::wait(*bell, std::chrono::seconds(30), [&] { return f.load() != 0; });
    const auto waited = std::chrono::steady_clock::now() - t0;
    Doorbell::remove_own();
    std::_Exit(waited < std::chrono::seconds(10) ? 0 : 4);
  }
  char byte;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  BellWord* bell = Doorbell::of(child);
  ASSERT_NE(bell, nullptr);
  std::atomic_ref<std::uint32_t> sleepers(bell->sleepers);
  while (sleepers.load() == 0) std::this_thread::yield();  // the child is inside wait()
  std::atomic_ref<std::uint32_t>(*flag).store(1);
  Doorbell::ring(*bell);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: no bell, 3: pipe, 4: slept through the ring";
  ::munmap(flag, 4096);
}

TEST(Doorbell, RingingAnAwakeProcessLeavesItsWordAlone) {
  BellWord* bell = Doorbell::own();
  ASSERT_NE(bell, nullptr);
  const std::uint32_t before = std::atomic_ref<std::uint32_t>(bell->rings).load();
  Doorbell::ring(*bell);
  EXPECT_EQ(std::atomic_ref<std::uint32_t>(bell->rings).load(), before);
  Doorbell::remove_own();
}

// A child made by fork() has its own bell, not its parent's (which it
// inherits mapped): its sleeps are rung by its own ringers, it never
// consumes its parent's rings, and its remove_own() leaves the parent's
// name alone. (Before, own() was a function-local static the child shared;
// --gtest_repeat=2 failed the test above.)
TEST(Doorbell, AForkedChildHasItsOwnBellAndLeavesTheParentsAlone) {
  BellWord* mine = Doorbell::own();
  ASSERT_NE(mine, nullptr);
  const std::string parent_name = "/dev/shm/onesided-bell-" + std::to_string(::getpid());
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    BellWord* theirs = Doorbell::own();
    if (!theirs || theirs == mine) std::_Exit(2);
    const std::string child_name = "/dev/shm/onesided-bell-" + std::to_string(::getpid());
    if (::access(child_name.c_str(), F_OK) != 0) std::_Exit(3);
    Doorbell::remove_own();
    if (::access(child_name.c_str(), F_OK) == 0) std::_Exit(4);
    std::_Exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: the parent's bell, 3: no bell of its own, 4: not removed";
  EXPECT_EQ(::access(parent_name.c_str(), F_OK), 0) << "the child removed its parent's bell";
  EXPECT_EQ(Doorbell::own(), mine);
  Doorbell::remove_own();
}
