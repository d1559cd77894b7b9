// Publication words order plain stores for whoever learns of them through a
// channel that carries no order of its own (in onesided: a bootstrap
// barrier, a libfabric message, the user's MPI call). Here the channel is a
// relaxed flag between two threads, which ThreadSanitizer sees as no
// ordering at all: the data is race-free only through publish() and take().
// Under TSan (make cpp-tsan) a publish or take without release/acquire is a
// reported race; elsewhere the test checks the values.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "memory/publication.hpp"

using onesided::detail::Publication;
using onesided::detail::PublicationWord;

TEST(Publication, TakeAfterLearningOfAPublishSeesTheStoresBeforeIt) {
  constexpr int kRounds = 2000;
  PublicationWord words[2];
  const Publication writer(words, 2, 0), reader(words, 2, 1);
  std::vector<std::uint64_t> data(64, 0);  // plain memory, like a window's
  std::atomic<int> learnt{0};              // the order-free channel
  std::atomic<int> consumed{0};

  std::thread origin([&] {
    for (int round = 1; round <= kRounds; ++round) {
      while (consumed.load(std::memory_order_relaxed) != round - 1) std::this_thread::yield();
      writer.take();
      for (auto& d : data) d = static_cast<std::uint64_t>(round);
      writer.publish();
      learnt.store(round, std::memory_order_relaxed);
    }
  });
  for (int round = 1; round <= kRounds; ++round) {
    while (learnt.load(std::memory_order_relaxed) != round) std::this_thread::yield();
    reader.take();
    for (const auto d : data) ASSERT_EQ(d, static_cast<std::uint64_t>(round));
    reader.publish();  // the reader's loads before the origin's next stores
    consumed.store(round, std::memory_order_relaxed);
  }
  origin.join();
}

TEST(Publication, OwnedWordsServeAWindowWithoutASharedMapping) {
  const Publication p = Publication::owned(3, 2);
  p.publish();
  p.take();  // no other process: only this process's threads use them
  SUCCEED();
}
