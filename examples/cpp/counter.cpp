// Atomic counters on a onesided window, from C++, in a group of one process.
// Shows the calls a C++ user needs and checks their results; exits non-zero
// on any mismatch, so `make cpp-example` doubles as a test of the installed
// package.
#include <cstdint>
#include <cstdio>
#include <memory>

#include <onesided/error.hpp>
#include <onesided/runtime.hpp>
#include <onesided/window.hpp>

using onesided::Dtype;
using onesided::Op;

namespace {

int failures = 0;

void expect(const char* what, std::int64_t got, std::int64_t want) {
  if (got == want) return;
  std::fprintf(stderr, "counter: %s is %lld, expected %lld\n", what, static_cast<long long>(got),
               static_cast<long long>(want));
  ++failures;
}

}  // namespace

int main() {
  try {
    // SelfBootstrap: a group of one process, so no launcher is needed; the
    // process is rank 0 and the target of every operation. 64 zeroed bytes,
    // displacements in 8-byte units: slots 0..7 of int64.
    auto win = onesided::Window::allocate(64, 8, {}, std::make_shared<onesided::SelfBootstrap>());
    const int me = 0;

    win->lock(me);

    // Slot 0: fetch_and_op SUM, adding 1..5. Calls are non-blocking, so each
    // needs its own origin and result memory until the flush below; the
    // default accumulate_ordering applies them in issue order, so the fetched
    // values are the running sums 0, 1, 3, 6, 10.
    const std::int64_t add[5] = {1, 2, 3, 4, 5};
    std::int64_t before_add[5] = {-1, -1, -1, -1, -1};
    for (int i = 0; i < 5; ++i) win->fetch_and_op(&add[i], &before_add[i], Dtype::Int64, me, 0, Op::Sum);

    // Slot 1: rmw INC takes no operand (origin ignored).
    std::int64_t before_inc = -1;
    win->rmw(Op::Inc, nullptr, &before_inc, 1, Dtype::Int64, me, 1);

    // Slot 2: compare_and_swap swaps only when the target equals `compare`:
    // the first succeeds (0 -> 42), the second, still expecting 0, does not.
    const std::int64_t swap1 = 42, swap2 = 7, compare = 0;
    std::int64_t before_cas1 = -1, before_cas2 = -1;
    win->compare_and_swap(&swap1, &compare, &before_cas1, Dtype::Int64, me, 2);
    win->compare_and_swap(&swap2, &compare, &before_cas2, Dtype::Int64, me, 2);

    // Completes everything above: fetched results are valid from here on.
    win->flush(me);

    // get is not ordered with the atomics, hence after the flush; its own
    // result is valid after the next flush (or the unlock).
    std::int64_t now[3] = {-1, -1, -1};
    win->get(now, 3, Dtype::Int64, me, 0);
    win->unlock(me);

    const std::int64_t want_before_add[5] = {0, 1, 3, 6, 10};
    for (int i = 0; i < 5; ++i) expect("fetch_and_op SUM result", before_add[i], want_before_add[i]);
    expect("slot 0 (sum of 1..5)", now[0], 15);
    expect("rmw INC result", before_inc, 0);
    expect("slot 1 (after INC)", now[1], 1);
    expect("first compare_and_swap result", before_cas1, 0);
    expect("second compare_and_swap result", before_cas2, 42);
    expect("slot 2 (after compare_and_swap)", now[2], 42);

    std::printf("provider %s\n", win->provider().c_str());
    std::printf("fetch_and_op SUM 1..5: fetched %lld %lld %lld %lld %lld, slot 0 = %lld\n",
                static_cast<long long>(before_add[0]), static_cast<long long>(before_add[1]),
                static_cast<long long>(before_add[2]), static_cast<long long>(before_add[3]),
                static_cast<long long>(before_add[4]), static_cast<long long>(now[0]));
    std::printf("rmw INC: fetched %lld, slot 1 = %lld\n", static_cast<long long>(before_inc),
                static_cast<long long>(now[1]));
    std::printf("compare_and_swap 0->42, 0->7: fetched %lld %lld, slot 2 = %lld\n",
                static_cast<long long>(before_cas1), static_cast<long long>(before_cas2),
                static_cast<long long>(now[2]));
    std::printf("int64 atomics: %s (%s)\n", win->native_atomics(Dtype::Int64) ? "native" : "software",
                win->atomics_reason(Dtype::Int64).c_str());

    win->free();
  } catch (const onesided::Error& e) {
    std::fprintf(stderr, "counter: onesided error: %s\n", e.what());
    return 1;
  }
  onesided::shutdown();  // progress thread and provider endpoints
  if (failures) {
    std::fprintf(stderr, "counter: %d check(s) failed\n", failures);
    return 1;
  }
  std::printf("counter: all checks passed\n");
  return 0;
}
