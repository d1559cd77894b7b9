// The loopback checks a transport runs at open (transport/loopback_atomics):
// a provider that completes the check's atomic only after the check gave up
// must find the check's memory still there. Run under ASan (make cpp-asan),
// a check that freed it (or left it on its stack) fails here with a
// use-after-free or stack-use-after-return at the late write.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "transport/loopback_atomics.hpp"

using namespace onesided;
using namespace onesided::detail;

namespace {

// A transport whose atomics complete only when the test says so, after the
// check has returned: what a provider that never completes in time does.
class LateTransport final : public Transport {
 public:
  struct Region final : LocalRegion {
    void* base;
    explicit Region(void* b) : base(b) {}
    RemoteRegion remote() const override { return {}; }
  };
  void* target = nullptr;  // the last registered region's memory
  void* result = nullptr;  // where the last atomic's old value goes
  Completion* done = nullptr;
  bool at_once = false;     // complete each atomic as it is posted
  std::int64_t skew = 0;    // added to the old value returned: 0 is faithful

  // Completes the last atomic, as the provider would: the target cell
  // changes, the old value arrives, then the completion.
  void complete_late() {
    std::int64_t old;
    std::memcpy(&old, target, sizeof old);
    const std::int64_t next = old + 1, returned = old + skew;
    std::memcpy(target, &next, sizeof next);
    std::memcpy(result, &returned, sizeof returned);
    done->complete(nullptr);
  }

  const std::string& provider() const override { return name_; }
  std::string address() const override { return "late"; }
  PeerAddr insert_peer(const std::string&) override { return 0; }
  std::unique_ptr<LocalRegion> register_region(void* base, std::size_t) override {
    target = base;
    return std::make_unique<Region>(base);
  }
  void write(PeerAddr, const void*, std::size_t, RemoteRegion, std::uint64_t, Completion*) override {}
  void read(PeerAddr, void*, std::size_t, RemoteRegion, std::uint64_t, Completion*) override {}
  void send(PeerAddr, const void*, std::size_t) override {}
  std::size_t max_stretches() const override { return 1; }
  void write_stretches(PeerAddr, std::span<const Stretch>, RemoteRegion, Completion*) override {}
  void read_stretches(PeerAddr, std::span<const Stretch>, RemoteRegion, Completion*) override {}
  std::size_t native_count(AtomicKind, Op, Dtype) override { return 1; }
  AtomicOrder atomic_order() const override { return {}; }
  const std::string& native_unavailable() const override { return none_; }
  void atomic(PeerAddr, AtomicKind, Op, Dtype, const void*, const void*, void* res, std::size_t, RemoteRegion,
              std::uint64_t, Completion* d) override {
    result = res;
    done = d;
    if (at_once) complete_late();
  }
  std::size_t max_atomic_stretches() const override { return 2; }
  void fetch_atomic_stretches(PeerAddr, Op, Dtype, std::span<const AtomicStretch> stretches, RemoteRegion,
                              Completion* d) override {
    result = stretches[0].result;
    done = d;
  }
  std::size_t max_message_size() const override { return 4096; }
  std::size_t eager_message_size() const override { return 0; }
  void set_message_handler(MessageHandler) override {}
  std::size_t progress(bool) override { return 0; }

 private:
  std::string name_ = "late", none_;
};

TEST(LoopbackAtomics, EightFaithfulFetchAddsPassAndAWrongOldValueIsNamed) {
  LateTransport faithful;
  faithful.at_once = true;
  EXPECT_EQ(loopback_atomics_fault(faithful, 0, "late"), "");
  LateTransport wrong;
  wrong.at_once = true;
  wrong.skew = 5;
  EXPECT_NE(loopback_atomics_fault(wrong, 0, "late").find("returned 5, expected 0"), std::string::npos);
}

TEST(LoopbackAtomics, AnAtomicCompletedAfterTheCheckGaveUpWritesLiveMemory) {
  LateTransport t;
  EXPECT_EQ(loopback_atomics_fault(t, 0, "late"), "provider late never completed a loopback atomic");
  ASSERT_NE(t.done, nullptr);
  t.complete_late();  // the check's cell, old value and flag, long after it returned
}

TEST(LoopbackAtomics, AVectoredAtomicCompletedAfterTheCheckGaveUpWritesLiveMemory) {
  LateTransport t;
  EXPECT_FALSE(loopback_stretches_faithful(t, 0));
  ASSERT_NE(t.done, nullptr);
  t.complete_late();
}

}  // namespace
