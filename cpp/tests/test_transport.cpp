// The Transport seam against real libfabric providers: two endpoints in one
// process talk through the same calls a window makes.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "onesided/error.hpp"
#include "transport/progress.hpp"
#include "transport/transport.hpp"

using namespace onesided::detail;

namespace {

struct Flag final : Completion {
  std::atomic<int> done{0};
  std::string error;
  void complete(const char* e) override {
    if (e) error = e;
    done = 1;
  }
};

void drive(Transport& a, Transport& b, auto&& pred) {
  for (long i = 0; i < 50'000'000 && !pred(); ++i) {
    a.progress(false);
    b.progress(false);
  }
  ASSERT_TRUE(pred()) << "no completion";
}

class TransportTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TransportTest, WriteReadAndOrderedMessages) {
  auto a = open_fabric_transport(GetParam(), true);
  auto b = open_fabric_transport(GetParam(), true);
  std::vector<std::int64_t> exposed(16, 0);
  auto region = b->register_region(exposed.data(), exposed.size() * sizeof(std::int64_t));
  PeerAddr b_from_a = a->insert_peer(b->address());
  EXPECT_EQ(a->insert_peer(b->address()), b_from_a);  // cached

  std::int64_t src[3] = {7, 8, 9};
  Flag wrote;
  a->write(b_from_a, src, sizeof src, region->remote(), 4 * sizeof(std::int64_t), &wrote);
  drive(*a, *b, [&] { return wrote.done.load() == 1; });
  EXPECT_EQ(wrote.error, "");
  EXPECT_EQ(exposed[3], 0);
  EXPECT_EQ(exposed[4], 7);
  EXPECT_EQ(exposed[6], 9);
  EXPECT_EQ(exposed[7], 0);

  exposed[10] = 42;
  std::int64_t dst = 0;
  Flag got;
  a->read(b_from_a, &dst, sizeof dst, region->remote(), 10 * sizeof(std::int64_t), &got);
  drive(*a, *b, [&] { return got.done.load() == 1; });
  EXPECT_EQ(dst, 42);

  // Messages arrive in send order, small (injected) and large alike.
  std::vector<int> seen;
  b->set_message_handler([&](const std::byte* d, std::size_t n) {
    int first;
    std::memcpy(&first, d, sizeof first);
    seen.push_back(first);
    EXPECT_TRUE(n == sizeof(int) || n == 32 * 1024);
  });
  std::vector<int> big(32 * 1024 / sizeof(int));
  for (int i = 0; i < 200; ++i) {
    if (i % 3 == 0) {
      big[0] = i;
      a->send(b_from_a, big.data(), big.size() * sizeof(int));
    } else {
      a->send(b_from_a, &i, sizeof i);
    }
  }
  drive(*a, *b, [&] { return seen.size() == 200; });
  for (int i = 0; i < 200; ++i) EXPECT_EQ(seen[i], i);
}

TEST_P(TransportTest, UnknownProviderNamesTheCall) {
  try {
    open_fabric_transport("no-such-provider", true);
    FAIL() << "expected an error";
  } catch (const onesided::Error& e) {
    EXPECT_EQ(e.category(), onesided::ErrorCategory::Transport);
    EXPECT_NE(std::string(e.what()).find("fi_getinfo"), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(Providers, TransportTest, ::testing::Values("shm", "tcp;ofi_rxm"),
                         [](const auto& info) { return info.param == "shm" ? std::string("shm") : std::string("tcp"); });

}  // namespace
