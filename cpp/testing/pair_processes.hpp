// Two ranks in two forked processes, bootstrapped over a socketpair: the
// smallest real setting for a window test (cpp/tests).
#pragma once

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <memory>

#include "pair_bootstrap.hpp"

namespace onesided::testing {

// Runs body(rank, bootstrap) in two forked children, each reporting through
// its exit status; the status of ranks below `checked` must be 0 (rank 0
// is reaped first: a rank 1 that kills itself stays a zombie meanwhile).
// The test process itself never opens a provider, so every child starts
// from a clean libfabric state (libfabric is not fork-safe).
template <class Body>
void run_pair(Body body, int checked = 2) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  pid_t pids[2];
  for (int rank = 0; rank < 2; ++rank) {
    pids[rank] = ::fork();
    ASSERT_GE(pids[rank], 0);
    if (pids[rank] == 0) {
      ::close(fds[1 - rank]);
      alarm(60);  // a hang kills the child, which fails the test
      int status = 0;
      try {
        auto boot = std::make_shared<PairBootstrap>(rank, fds[rank]);
        status = body(rank, boot) ? 0 : 1;
      } catch (const std::exception& e) {
        fprintf(stderr, "rank %d: %s\n", rank, e.what());
        status = 2;
      }
      ::_exit(status);
    }
  }
  ::close(fds[0]);
  ::close(fds[1]);
  for (int rank = 0; rank < 2; ++rank) {
    int wstatus = 0;
    ::waitpid(pids[rank], &wstatus, 0);
    if (rank < checked)
      EXPECT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0)
          << "rank " << rank << " failed, wait status " << wstatus;
  }
}

}  // namespace onesided::testing
