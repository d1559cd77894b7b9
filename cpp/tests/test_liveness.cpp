// A peer on another host is watched by a kept TCP connection to its
// liveness listener (peers/liveness.hpp): alive while its process lives,
// gone within a look of its exit, naming its pid and host; one connection
// per listener; the timeout's setting is checked. (A silent host and a
// stopped peer need a second network namespace: tests/test_peer_death.py.)
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "onesided/error.hpp"
#include "peers/liveness.hpp"

namespace {

using onesided::detail::LifeSign;

// A child process with a liveness listener, waiting to be killed; its port.
struct ListeningChild {
  pid_t pid = 0;
  std::uint16_t port = 0;
  ListeningChild() {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    pid = ::fork();
    if (pid == 0) {
      const std::uint16_t port = onesided::detail::liveness_port();
      (void)!::write(fds[1], &port, sizeof port);
      for (;;) ::pause();
    }
    ::close(fds[1]);
    EXPECT_EQ(::read(fds[0], &port, sizeof port), static_cast<ssize_t>(sizeof port));
    ::close(fds[0]);
  }
  void kill() {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    pid = 0;
  }
  ~ListeningChild() {
    if (pid) kill();
  }
};

// gone() asked as a wait does (every 100 ms), until it says something or
// `limit` has passed.
std::optional<std::string> gone_within(const LifeSign& life, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (auto why = life.gone()) return why;
    if (std::chrono::steady_clock::now() > end) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the waits' pace, not a synchronisation
  }
}

}  // namespace

TEST(Liveness, AKilledPeerIsGoneNamingItsPidAndHost) {
  ListeningChild child;
  ASSERT_NE(child.port, 0);
  auto life = onesided::detail::watch_link("far", "127.0.0.1", child.port, child.pid);
  ASSERT_TRUE(life);
  EXPECT_FALSE(gone_within(*life, std::chrono::milliseconds(300)));  // alive: connected, nothing said
  const auto pid = child.pid;
  child.kill();
  const auto why = gone_within(*life, std::chrono::milliseconds(1000));
  ASSERT_TRUE(why);
  EXPECT_EQ(why->rfind("(pid " + std::to_string(pid) + " on host far) has died", 0), 0u) << *why;
  EXPECT_EQ(*life->gone(), *why);  // the verdict is kept
}

TEST(Liveness, OneConnectionPerListener) {
  ListeningChild child;
  auto a = onesided::detail::watch_link("far", "127.0.0.1", child.port, child.pid);
  auto b = onesided::detail::watch_link("far", "127.0.0.1", child.port, child.pid);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_FALSE(onesided::detail::watch_link("far", "", child.port, child.pid));  // nothing to connect to
  EXPECT_FALSE(onesided::detail::watch_link("far", "127.0.0.1", 0, child.pid));
}

TEST(Liveness, PeerTimeoutIsChecked) {
  ::setenv("ONESIDED_PEER_TIMEOUT", "7", 1);
  EXPECT_EQ(onesided::detail::peer_timeout().count(), 7);
  for (const char* bad : {"1", "2.5", "x", "3601"}) {
    ::setenv("ONESIDED_PEER_TIMEOUT", bad, 1);
    EXPECT_THROW(onesided::detail::peer_timeout(), onesided::Error) << bad;
  }
  ::unsetenv("ONESIDED_PEER_TIMEOUT");
  EXPECT_EQ(onesided::detail::peer_timeout().count(), 3);
}
