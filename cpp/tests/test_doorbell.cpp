// The doorbell wakes a sleeping process at once, and ringing an awake one
// costs no system call (its futex word stays untouched); it has no name in
// /dev/shm, and a forked child's bell is its own.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "transport/doorbell.hpp"

using onesided::detail::BellWord;
using onesided::detail::Doorbell;
using onesided::detail::MemoryFileAddress;

namespace {

// /dev/shm entries that carry `pid` in their name (as onesided's bells did).
std::vector<std::string> named_after(pid_t pid) {
  std::vector<std::string> found;
  const std::string p = std::to_string(pid);
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm"))
    if (e.path().filename().string().find(p) != std::string::npos) found.push_back(e.path().string());
  return found;
}

}  // namespace

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
    const MemoryFileAddress at = Doorbell::address();
    if (::write(ready[1], &at, sizeof at) != sizeof at) std::_Exit(3);
    const auto t0 = std::chrono::steady_clock::now();
    std::atomic_ref<std::uint32_t> f(*flag);
    // Each wait would sleep 30 s unless rung.
    while (f.load() == 0) Doorbell::wait(*bell, std::chrono::seconds(30), [&] { return f.load() != 0; });
    const auto waited = std::chrono::steady_clock::now() - t0;
    std::_Exit(waited < std::chrono::seconds(10) ? 0 : 4);
  }
  MemoryFileAddress at;
  ASSERT_EQ(::read(ready[0], &at, sizeof at), static_cast<ssize_t>(sizeof at));
  EXPECT_EQ(at.pid, child);
  EXPECT_EQ(named_after(child), std::vector<std::string>{}) << "the bell has a name in /dev/shm";
  BellWord* bell = Doorbell::of(at);
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
}

// A child made by fork() has its own bell, not its parent's (which it
// inherits mapped): its sleeps are rung by its own ringers and it never
// consumes its parent's rings. (Before, own() was a function-local static
// the child shared; --gtest_repeat=2 failed the first test above.) The
// parent's bell still opens and rings after the child, which closed its
// copy of the parent's descriptor, is gone.
TEST(Doorbell, AForkedChildHasItsOwnBellAndLeavesTheParentsAlone) {
  BellWord* mine = Doorbell::own();
  ASSERT_NE(mine, nullptr);
  const MemoryFileAddress parent = Doorbell::address();
  std::atomic_ref<std::uint32_t> rings(mine->rings), sleepers(mine->sleepers);
  const std::uint32_t before = rings.load();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    BellWord* theirs = Doorbell::own();
    if (!theirs || theirs == mine) std::_Exit(2);
    const MemoryFileAddress at = Doorbell::address();
    if (at.pid != ::getpid() || at.inode == parent.inode) std::_Exit(3);
    // The child's bell is another page: ringing it leaves the parent's alone.
    std::atomic_ref<std::uint32_t>(theirs->sleepers).store(1);
    Doorbell::ring(*theirs);
    if (std::atomic_ref<std::uint32_t>(mine->rings).load() != before) std::_Exit(4);
    std::_Exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: the parent's bell, 3: the parent's address, 4: rang the parent's";
  EXPECT_EQ(Doorbell::own(), mine);
  EXPECT_EQ(Doorbell::address().inode, parent.inode);
  // Another process opens the parent's bell by its address, as a peer at
  // window creation does, and its ring reaches the parent's page (which
  // counts a sleeper meanwhile, so that ring() rings).
  sleepers.fetch_add(1);
  const pid_t peer = ::fork();
  ASSERT_GE(peer, 0);
  if (peer == 0) {
    // Doorbell::of's cache is inherited; open afresh, as another process would.
    BellWord* b = reinterpret_cast<BellWord*>(onesided::detail::MemoryFile::open(parent).map(4096));
    Doorbell::ring(*b);
    std::_Exit(0);
  }
  ASSERT_EQ(::waitpid(peer, &status, 0), peer);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  sleepers.fetch_sub(1);
  EXPECT_GT(rings.load(), before) << "the peer's ring did not reach the parent's bell";
  EXPECT_EQ(named_after(::getpid()), std::vector<std::string>{});
}
