// Leftovers of dead processes in /dev/shm are removed; those of live
// processes, and names that are not onesided's or libfabric's, stay.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "transport/stale_shm.hpp"

namespace {

bool exists(const std::string& name) { return ::access(("/dev/shm/" + name).c_str(), F_OK) == 0; }

void make(const std::string& name) {
  const int fd = ::open(("/dev/shm/" + name).c_str(), O_CREAT | O_RDWR, 0600);
  ASSERT_GE(fd, 0);
  ::close(fd);
}

// A pid that surely does not exist now: a child that has exited and been reaped.
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

}  // namespace

TEST(StaleSharedMemory, RemovesOnlyWhatDeadProcessesLeft) {
  const std::string dead = std::to_string(dead_pid()), live = std::to_string(::getppid());
  const std::string names[] = {dead + ":0:0", "onesided-bell-" + dead, "onesided-" + dead + "-3-12345",
                               live + ":0:0", "onesided-bell-" + live, "notours-" + dead};
  for (const auto& n : names) make(n);
  EXPECT_GE(onesided::detail::remove_stale_shared_memory(), 3u);
  EXPECT_FALSE(exists(names[0]));
  EXPECT_FALSE(exists(names[1]));
  EXPECT_FALSE(exists(names[2]));
  EXPECT_TRUE(exists(names[3]));
  EXPECT_TRUE(exists(names[4]));
  EXPECT_TRUE(exists(names[5]));
  for (const auto& n : names) ::unlink(("/dev/shm/" + n).c_str());
}

// A killed process whose parent has not reaped it is a zombie: gone all the
// same (an init that does not reap keeps such zombies forever).
TEST(StaleSharedMemory, AZombieOwnerIsGone) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  // Not reaped yet: wait until the kernel has made it a zombie.
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT), 0);
  const std::string name = std::to_string(pid) + ":0:0";
  make(name);
  EXPECT_GE(onesided::detail::remove_stale_shared_memory(), 1u);
  EXPECT_FALSE(exists(name));
  ::waitpid(pid, nullptr, 0);
}
