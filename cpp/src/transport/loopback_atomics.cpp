#include "transport/loopback_atomics.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "onesided/error.hpp"

namespace onesided::detail {
namespace {

struct Flag final : Completion {
  bool done = false;
  std::string error;
  void complete(const char* e) override {
    if (e) error = e;
    done = true;
  }
};

// What one check's operation writes until it completes: the flag, the
// cells (its target, registered) and the old values (its operands are
// static). A check that gives up on an operation (a provider that never
// completes it) cannot know it will not complete later, so that memory is
// then kept for the life of the process (a few dozen bytes, at most once
// per endpoint opened) instead of being freed under a late write.
struct Probe {
  Flag flag;
  std::array<std::int64_t, 3> cells{}, got{-1, -1, -1};
  std::unique_ptr<LocalRegion> region;
  explicit Probe(Transport& t) : region(t.register_region(cells.data(), sizeof cells)) {}
};

struct Retire {
  void operator()(Probe* p) const {
    if (p->flag.done) return delete p;
    // Kept reachable, so a leak checker does not report it. The region
    // stays registered: the late write may still need it.
    static std::mutex mutex;
    static auto* abandoned = new std::vector<Probe*>;
    std::lock_guard lk(mutex);
    abandoned->push_back(p);
  }
};
using ProbePtr = std::unique_ptr<Probe, Retire>;

// Progress until `flag` completes or a bound of rounds passes (a provider
// that never completes must not hang the open); an exception from the post
// counts as the failure it reports.
template <class Post>
void run(Transport& t, Flag& flag, Post&& post) {
  try {
    post();
    for (long spins = 0; !flag.done && spins < 100'000'000; ++spins) t.progress(false);
  } catch (const Error& e) {
    flag.error = e.what();
  }
}

}  // namespace

std::string loopback_atomics_fault(Transport& t, PeerAddr self, const std::string& provider) {
  static constexpr std::int64_t kOne = 1;  // an operand the provider may read until completion
  ProbePtr p(new Probe(t));
  for (std::int64_t i = 0; i < 8; ++i) {
    p->flag.done = false;  // the previous fetch-add completed: nothing else writes the flag
    run(t, p->flag, [&] {
      t.atomic(self, AtomicKind::Fetch, Op::Sum, Dtype::Int64, &kOne, nullptr, &p->got[0], 1, p->region->remote(), 0,
               &p->flag);
    });
    if (p->flag.done && p->flag.error.empty() && p->got[0] == i && p->cells[0] == i + 1) continue;
    if (!p->flag.done) return "provider " + provider + " never completed a loopback atomic";
    return "provider " + provider +
           " does not complete atomics a rank applies to its own memory faithfully (a loopback fetch-and-add "
           "returned " + std::to_string(p->got[0]) + ", expected " + std::to_string(i) + ")";
  }
  return {};
}

bool loopback_stretches_faithful(Transport& t, PeerAddr self) {
  ProbePtr p(new Probe(t));
  p->cells = {10, 20, 30};
  static constexpr std::array<std::int64_t, 2> kAdd{1, 2};
  auto bytes = [](const std::int64_t* q) { return reinterpret_cast<std::byte*>(const_cast<std::int64_t*>(q)); };
  const std::array<Transport::AtomicStretch, 2> two{{
      {bytes(&kAdd[0]), bytes(&p->got[0]), 0, 1},
      {bytes(&kAdd[1]), bytes(&p->got[2]), 2 * sizeof(std::int64_t), 1},
  }};
  run(t, p->flag, [&] { t.fetch_atomic_stretches(self, Op::Sum, Dtype::Int64, two, p->region->remote(), &p->flag); });
  return p->flag.done && p->flag.error.empty() && p->got[0] == 10 && p->got[2] == 30 && p->cells[0] == 11 &&
         p->cells[1] == 20 && p->cells[2] == 32;
}

}  // namespace onesided::detail
