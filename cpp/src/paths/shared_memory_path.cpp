// The shared-memory path: every rank of the window is on this host and
// every rank maps every rank's memory (state.shared): one shared object
// after a control page of stripe locks (Allocate, Allocate_shared), or, for
// a Create window over Alloc_mem memory, each rank's block mapped by all
// beside a control page made for the window (memory/joined_segment.cpp).
//
// Invariants:
//  - Memory touched: the target's segment in the shared mapping, by the
//    calling thread; nothing else, no provider, no messages.
//  - Locks: aligned elements of 1/2/4/8 bytes are updated by lock-free CPU
//    atomics; longer or misaligned elements under the stripe lock chosen by
//    their rank and offset (SharedSegment::offset_of, the same in every
//    process). This is the
//    only path on that memory, so every accumulate-style op is atomic with
//    every other. Each element is its own unit already, so the info key
//    mpi_accumulate_granularity changes nothing here (only the software
//    atomics' lock span, software_atomics.cpp).
//  - Order and completion: each op takes effect, sequentially consistent,
//    before its call returns; so every accumulate_ordering pair is kept and
//    nothing is ever in flight. flush() only publishes the plain stores
//    (puts): a release increment of this rank's publication word
//    (memory/publication.hpp), which whoever learns of the flush through
//    Fence, Post/Complete or Sync acquires; a lock word and a notification
//    counter carry their own release and acquire. No standalone fence.
//  - Notification: the target's counter, in the shared mapping, gets a
//    release increment after the data (the op completed in its call), so
//    the target's acquire load of the count sees the data.
#include <array>
#include <atomic>
#include <cstring>

#include "layout/runs.hpp"
#include "memory/publication.hpp"
#include "atomics/cpu_atomics.hpp"
#include "paths/paths.hpp"

namespace onesided::detail {
namespace {

class SharedMemoryPath final : public DataPath {
 public:
  explicit SharedMemoryPath(WindowState& s)
      : segment_(*s.shared),
        stripes_(*reinterpret_cast<cpu::Stripes*>(s.shared->control())),
        publication_(s.publication),
        notify_(s.shared_notify),
        per_rank_(s.notifications) {}

  const std::string& name() const override {
    static const std::string n = "shared-memory";
    return n;
  }
  const std::string& description() const override {
    static const std::string d = "loads, stores and CPU atomics on memory every rank on this host maps";
    return d;
  }
  bool completes_in_call() const override { return true; }
  std::string ordering() const override {
    return "shared-memory path: each op takes effect before its call returns; every order kept";
  }

  void put(const Where& w, const void* origin, std::size_t bytes, const RequestPtr&) override {
    std::memmove(segment_.base(w.target) + w.at, origin, bytes);
  }
  void get(const Where& w, void* result, std::size_t bytes, const RequestPtr&) override {
    std::memmove(result, segment_.base(w.target) + w.at, bytes);
  }
  void put_pieces(const Where& w, const std::byte* origin, std::span<const Piece> pieces, const RequestPtr&) override {
    std::byte* t = segment_.base(w.target) + w.at;
    for (const Piece& p : pieces) copy_piece(t + p.target, origin + p.origin, p.bytes);
  }
  void get_pieces(const Where& w, std::byte* result, std::span<const Piece> pieces, const RequestPtr&) override {
    const std::byte* t = segment_.base(w.target) + w.at;
    for (const Piece& p : pieces) copy_piece(result + p.origin, t + p.target, p.bytes);
  }
  void put_nest(const Where& w, const std::byte* origin, const Nest<2>& nest, const RequestPtr&) override {
    copy_nest(segment_.base(w.target) + w.at, origin, nest, 1, 0);
  }
  void get_nest(const Where& w, std::byte* result, const Nest<2>& nest, const RequestPtr&) override {
    copy_nest(result, segment_.base(w.target) + w.at, nest, 0, 1);
  }
  void accumulate(const Where& w, const AtomicCall& c, const RequestPtr&) override {
    std::byte* t = segment_.base(w.target) + w.at;
    cpu::apply(c.op, c.dtype, t, segment_.offset_of(w.target, t), c.origin, c.origin2, c.result, c.count, stripes_);
  }
  // The nest's chunks to the CPU atomics in batches, one dtype dispatch
  // per batch rather than one accumulate() per chunk.
  void accumulate_nest(const Where& w, const AtomicCall& c, const Nest<3>& nest, const RequestPtr&) override {
    std::byte* t = segment_.base(w.target) + w.at;
    const std::uint64_t t_offset = segment_.offset_of(w.target, t);
    const auto* origin = static_cast<const std::byte*>(c.origin);
    auto* result = static_cast<std::byte*>(c.result);
    std::array<cpu::Chunk, 256> batch;
    std::size_t n = 0;
    auto apply = [&] {
      cpu::apply_chunks(c.op, c.dtype, t, t_offset, origin, result, std::span(batch.data(), n), nest.chunk, stripes_);
      n = 0;
    };
    nest.for_each_chunk([&](const std::array<std::int64_t, 3>& at, std::uint64_t) {
      batch[n++] = {at[0], at[1], at[2]};
      if (n == batch.size()) apply();
    });
    if (n) apply();
  }
  // Puts are plain stores into memory other processes map: published on
  // this rank's word, so they happen before the loads of whoever takes it
  // after the synchronisation that follows (memory/publication.hpp).
  void flush(int) override { publication_.publish(); }
  void flush_all() override { publication_.publish(); }
  void notify(int target, std::size_t index, const RequestPtr&) override {
    notify_[static_cast<std::size_t>(target) * per_rank_ + index].fetch_add(1, std::memory_order_release);
  }
  std::string notification() const override {
    return "a release increment of the target's counter in shared memory, after the data";
  }
  void expect_incoming(int) override {}  // nothing arrives through progress

 private:
  SharedSegment& segment_;
  cpu::Stripes& stripes_;
  const Publication& publication_;
  std::atomic<std::uint64_t>* notify_;  // every rank's counters (state/window_state.hpp)
  std::size_t per_rank_;
};

}  // namespace

std::unique_ptr<DataPath> shared_memory_path(WindowState& state) {
  return std::make_unique<SharedMemoryPath>(state);
}

}  // namespace onesided::detail
