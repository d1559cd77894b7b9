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

namespace {

// Rounds of plain stores by an origin thread and loads by a reader thread,
// each learning of the other's turn only through relaxed flags. The origin
// calls `origin_sync(true)` before its stores and `origin_sync(false)` after
// them; the reader calls `reader_sync(true)` before its loads and
// `reader_sync(false)` after them.
template <class OriginSync, class ReaderSync>
void exchange_rounds(OriginSync origin_sync, ReaderSync reader_sync) {
  constexpr int kRounds = 2000;
  std::vector<std::uint64_t> data(64, 0);  // plain memory, like a window's
  std::atomic<int> learnt{0};              // the order-free channel, both ways
  std::atomic<int> consumed{0};

  std::thread origin([&] {
    for (int round = 1; round <= kRounds; ++round) {
      while (consumed.load(std::memory_order_relaxed) != round - 1) std::this_thread::yield();
      origin_sync(true);
      for (auto& d : data) d = static_cast<std::uint64_t>(round);
      origin_sync(false);
      learnt.store(round, std::memory_order_relaxed);
    }
  });
  for (int round = 1; round <= kRounds; ++round) {
    while (learnt.load(std::memory_order_relaxed) != round) std::this_thread::yield();
    reader_sync(true);
    for (const auto d : data) ASSERT_EQ(d, static_cast<std::uint64_t>(round));
    reader_sync(false);
    consumed.store(round, std::memory_order_relaxed);
  }
  origin.join();
}

}  // namespace

TEST(Publication, TakeAfterLearningOfAPublishSeesTheStoresBeforeIt) {
  PublicationWord words[2];
  const Publication writer(words, 2, 0), reader(words, 2, 1);
  // The reader publishes after its loads so they come before the origin's next stores.
  exchange_rounds([&](bool before) { before ? writer.take() : writer.publish(); },
                  [&](bool before) { before ? reader.take() : reader.publish(); });
}

// Win_sync's form (window/active.cpp): each side only calls
// publish_and_take() around its stores and loads, as a user polling a flag
// with Win_sync does. Its read-modify-write must release this rank's
// stores and its loads must acquire the other rank's: without either,
// TSan reports the data as a race.
TEST(Publication, WinSyncOnBothSidesOrdersTheStoresAroundIt) {
  PublicationWord words[2];
  const Publication writer(words, 2, 0), reader(words, 2, 1);
  exchange_rounds([&](bool) { writer.publish_and_take(); }, [&](bool) { reader.publish_and_take(); });
}

TEST(Publication, OwnedWordsServeAWindowWithoutASharedMapping) {
  const Publication p = Publication::owned(3, 2);
  p.publish();
  p.take();  // no other process: only this process's threads use them
  SUCCEED();
}
