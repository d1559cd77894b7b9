#include "transport/loopback_atomics.hpp"

#include <array>
#include <cstdint>

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

// What may still arrive for an abandoned flag arrives before it goes.
void drain(Transport& t) {
  for (int k = 0; k < 1000; ++k) t.progress(false);
}

}  // namespace

std::string loopback_atomics_fault(Transport& t, PeerAddr self, const std::string& provider) {
  std::int64_t cell = 0, got = -1;
  const std::int64_t one = 1;
  auto region = t.register_region(&cell, sizeof cell);
  for (std::int64_t i = 0; i < 8; ++i) {
    Flag flag;
    run(t, flag, [&] {
      t.atomic(self, AtomicKind::Fetch, Op::Sum, Dtype::Int64, &one, nullptr, &got, 1, region->remote(), 0, &flag);
    });
    if (flag.done && flag.error.empty() && got == i && cell == i + 1) continue;
    drain(t);
    if (!flag.done) return "provider " + provider + " never completed a loopback atomic";
    return "provider " + provider +
           " does not complete atomics a rank applies to its own memory faithfully (a loopback fetch-and-add "
           "returned " + std::to_string(got) + ", expected " + std::to_string(i) + ")";
  }
  return {};
}

bool loopback_stretches_faithful(Transport& t, PeerAddr self) {
  std::array<std::int64_t, 3> cells{10, 20, 30}, got{-1, -1, -1};
  const std::array<std::int64_t, 2> add{1, 2};
  auto region = t.register_region(cells.data(), sizeof cells);
  auto bytes = [](auto* p) { return reinterpret_cast<std::byte*>(const_cast<std::int64_t*>(p)); };
  const std::array<Transport::AtomicStretch, 2> two{{
      {bytes(&add[0]), bytes(&got[0]), 0, 1},
      {bytes(&add[1]), bytes(&got[2]), 2 * sizeof(std::int64_t), 1},
  }};
  Flag flag;
  run(t, flag, [&] { t.fetch_atomic_stretches(self, Op::Sum, Dtype::Int64, two, region->remote(), &flag); });
  const bool faithful = flag.done && flag.error.empty() && got[0] == 10 && got[2] == 30 && cells[0] == 11 &&
                        cells[1] == 20 && cells[2] == 32;
  if (!faithful) drain(t);
  return faithful;
}

}  // namespace onesided::detail
