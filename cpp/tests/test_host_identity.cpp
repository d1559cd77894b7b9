// The host key tells apart what cannot share memory and nothing else: a
// child in another network namespace (root only) has another key, a child
// that only changes its hostname (another UTS namespace) has the same.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "memory/host_identity.hpp"

namespace {

// The host key of a child that first unshares `flags`; "" if it may not.
std::string key_after_unshare(int flags, const char* hostname = nullptr) {
  int fds[2];
  if (::pipe(fds) != 0) return "";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    std::string key;
    if (::unshare(flags) == 0 && (!hostname || ::sethostname(hostname, std::char_traits<char>::length(hostname)) == 0))
      key = onesided::detail::host_key();
    (void)!::write(fds[1], key.data(), key.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string key;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR);)
    if (n > 0) key.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  ::waitpid(pid, nullptr, 0);
  return key;
}

}  // namespace

TEST(HostIdentity, NamesEveryPart) {
  const std::string key = onesided::detail::host_key();
  for (const char* part : {"boot=", " shm=", " ipc=", " pid=", " net="}) EXPECT_NE(key.find(part), std::string::npos) << key;
  EXPECT_EQ(key.find('?'), std::string::npos) << "a part could not be read: " << key;
  EXPECT_EQ(key, onesided::detail::host_key());
}

TEST(HostIdentity, AnotherNetworkNamespaceIsAnotherHost) {
  const std::string other = key_after_unshare(CLONE_NEWNET);
  if (other.empty()) GTEST_SKIP() << "cannot unshare the network namespace (not root)";
  const std::string mine = onesided::detail::host_key();
  EXPECT_NE(other, mine);
  EXPECT_EQ(other.substr(0, other.find(" net=")), mine.substr(0, mine.find(" net=")));
}

TEST(HostIdentity, AnotherHostnameIsTheSameHost) {
  const std::string other = key_after_unshare(CLONE_NEWUTS, "another-name");
  if (other.empty()) GTEST_SKIP() << "cannot unshare the UTS namespace (not root)";
  EXPECT_EQ(other, onesided::detail::host_key());
}
