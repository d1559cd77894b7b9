// The loopback checks a transport runs at open (transport/loopback_atomics):
// a provider that completes the check's atomic only after the check gave up
// must find the check's memory still there. Run under ASan (make cpp-asan),
// a check that freed it (or left it on its stack) fails here with a
// use-after-free or stack-use-after-return at the late write.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "null_transport.hpp"
#include "transport/loopback_atomics.hpp"

using namespace onesided;
using namespace onesided::detail;

namespace {

// A transport whose atomics complete only when the test says so, after the
// check has returned: what a provider that never completes in time does.
class LateTransport final : public NullTransport {
 public:
  void* target = nullptr;  // the last registered region's memory
  void* result = nullptr;  // where the last atomic's old value goes
  Completion* done = nullptr;
  bool at_once = false;     // complete each atomic as it is posted
  std::int64_t skew = 0;    // added to the old value returned: 0 is faithful

  LateTransport() : NullTransport("late") {}

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

  std::unique_ptr<LocalRegion> register_region(void* base, std::size_t len) override {
    target = base;
    return NullTransport::register_region(base, len);
  }
  void atomic(PeerAddr, AtomicKind, Op, Dtype, const void*, const void*, void* res, std::size_t, RemoteRegion,
              std::uint64_t, Completion* d) override {
    result = res;
    done = d;
    if (at_once) complete_late();
  }
  void fetch_atomic_stretches(PeerAddr, Op, Dtype, std::span<const AtomicStretch> stretches, RemoteRegion,
                              Completion* d) override {
    result = stretches[0].result;
    done = d;
  }
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
