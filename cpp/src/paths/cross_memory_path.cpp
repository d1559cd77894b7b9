// The cross-memory path: a Create or Create_dynamic window whose ranks are
// all on this host and can reach each other's memory (probed at creation)
// moves its data by cross-memory attach instead of through the provider,
// and needs no progress at the target.
//
// Invariants:
//  - Memory touched: puts and gets copy straight between this process and
//    the target's window with process_vm_writev/readv, in the calling
//    thread (a non-contiguous one as one vectored call). Accumulate-style
//    ops of every dtype take the cross-memory atomics
//    (cross_memory_atomics.hpp), the window's one atomic path: the calling
//    rank applies them under the target's atomic lock.
//  - Memory that may go away: on a dynamic window, each remote op holds a
//    count at the target's published region table for its copy
//    (memory/published_regions.hpp), checked to still cover the op's whole
//    range, so a Detach returns only after the copy; a range detached since
//    the window's addressing checked it raises a Bounds error, copying
//    nothing. A Create window's memory lives as long as the window.
//  - Locks: the target's atomic lock word (shared memory), per atomic op.
//  - Order and completion: every op is complete at the target when its call
//    returns, so every accumulate_ordering pair is kept, except a put or
//    get of at most StagedCopies::kLargest bytes without a Request: it
//    waits in the target's stage (staged_copies.hpp, a put's bytes copied),
//    copied with the stage's other ops, in order, at the next flush, epoch
//    end or notification to that target, or before the next other op to
//    it. So one origin's ops to one target still take effect in program
//    order. Only notifications travel through the provider (a Notify
//    message, as on the provider path), so flush(t) still waits for their
//    acknowledgements; a window without notification counters has nothing
//    in flight ever, and keeps no reference to a caller's memory after the
//    call but a staged get's result buffer (completes_in_call: the bindings
//    then keep the GIL, as on the shared-memory path; holds_get_results:
//    they keep a Get's result until the next completion point).
#include <algorithm>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "memory/cross_memory.hpp"
#include "memory/published_regions.hpp"
#include "paths/staged_copies.hpp"
#include "paths/cross_memory_atomics.hpp"
#include "paths/paths.hpp"
#include "paths/provider_path.hpp"

namespace onesided::detail {
namespace {

// Where a remote op may copy, as long as the returned hold lives.
// A Create window: its memory, for the window's life; nothing to hold.
struct WholeWindow {
  struct Hold {};
  Hold hold(const WindowState&, int, std::span<const PublishedRegions::Range>) const { return {}; }
  static constexpr const char* kWhat = "";
};

// A dynamic window: what the target has attached, published in shared memory.
struct Attached {
  std::shared_ptr<PublishedRegions> table;
  PublishedRegions::Hold hold(const WindowState& s, int target, std::span<const PublishedRegions::Range> ranges) const {
    auto held = table->hold(target, ranges, [&s] { s.check_peers(); });
    if (!held)
      raise(ErrorCategory::Bounds, "target range out of window: memory rank " + std::to_string(target) +
                                       " detached while this rank's access to it was under way (or waited, staged, "
                                       "for a flush): detach memory only once no origin will access it");
    return held;
  }
  static constexpr const char* kWhat = "; attached regions checked in tables every rank publishes in shared memory";
};

// The bytes from a Where that `pieces` reach.
std::size_t extent(std::span<const Piece> pieces) {
  std::uint64_t end = 0;
  for (const Piece& q : pieces) end = std::max<std::uint64_t>(end, q.target + q.bytes);
  return static_cast<std::size_t>(end);
}

template <class Reach>
class CrossMemoryPath final : public ProviderPath {
 public:
  CrossMemoryPath(WindowState& s, std::shared_ptr<void> mapping, SharedLockWord* atomic_words, Reach reach)
      : ProviderPath(s, "cross-memory",
                     "puts, gets and accumulate-style ops by cross-memory attach (process_vm_writev/readv), "
                     "puts and gets of up to " + std::to_string(StagedCopies::kLargest) +
                         " bytes staged and copied together at the next flush, atomics under the target's lock "
                         "in shared memory" +
                         std::string(Reach::kWhat) + "; notifications through provider " + s.provider),
        atomics_(s, std::move(mapping), atomic_words),
        reach_(std::move(reach)),
        puts_(s.nranks),
        gets_(s.nranks) {}

  // Every put, get and atomic is complete at the target when its call
  // returns, or (a small put or get) waits in a stage, complete at the next
  // flush; only a notification travels through the provider, so only a
  // window with notification counters has anything in flight, and no call
  // but a staged get keeps a reference to the caller's memory.
  bool completes_in_call() const override { return s_.notifications == 0; }
  bool holds_get_results() const override { return true; }
  std::string ordering() const override {
    return "cross-memory path: each op takes effect before its call returns, but puts and gets of up to " +
           std::to_string(StagedCopies::kLargest) +
           " bytes without a request, which take effect in order at the next flush or before the next other "
           "op to the same target; every order kept";
  }
  void accumulate(const Where& w, const AtomicCall& call, const RequestPtr&) override {
    if (w.local) return atomics_.apply(w, call);
    drain(w.target);
    [[maybe_unused]] const auto held = hold(w, call.count * dtype_info(call.dtype).size);
    atomics_.apply(w, call);
  }

  // Chunk by chunk through accumulate() above, never the provider path's
  // vectored atomics: a dtype's memory takes one path.
  void accumulate_nest(const Where& w, const AtomicCall& c, const Nest<3>& nest, const RequestPtr& request) override {
    DataPath::accumulate_nest(w, c, nest, request);
  }

  void put(const Where& w, const void* origin, std::size_t bytes, const RequestPtr& request) override {
    if (w.local) return ProviderPath::put(w, origin, bytes, request);
    const Peer& p = s_.peers[w.target];
    if (!request && bytes <= StagedCopies::kLargest) {
      gets_.drain(w.target, read_);  // a get staged before this put reads first
      return puts_.put(w.target, p.base + w.at, origin, bytes, write_);
    }
    drain(w.target);
    [[maybe_unused]] const auto held = hold(w, bytes);
    cma::write(static_cast<pid_t>(p.pid), p.base + w.at, origin, bytes);
  }
  void get(const Where& w, void* result, std::size_t bytes, const RequestPtr& request) override {
    if (w.local) return ProviderPath::get(w, result, bytes, request);
    const Peer& p = s_.peers[w.target];
    if (!request && bytes <= StagedCopies::kLargest) {
      puts_.drain(w.target, write_);  // a put staged before this get lands first
      return gets_.get(w.target, p.base + w.at, result, bytes, read_);
    }
    drain(w.target);
    [[maybe_unused]] const auto held = hold(w, bytes);
    cma::read(static_cast<pid_t>(p.pid), result, p.base + w.at, bytes);
  }
  // A non-contiguous put or get: every piece in one process_vm_writev/readv.
  void put_pieces(const Where& w, const std::byte* origin, std::span<const Piece> pieces,
                  const RequestPtr& request) override {
    if (w.local) return DataPath::put_pieces(w, origin, pieces, request);
    const Peer& p = s_.peers[w.target];
    drain(w.target);
    [[maybe_unused]] const auto held = hold(w, extent(pieces));
    cma::write(static_cast<pid_t>(p.pid), spans(p.base + w.at, const_cast<std::byte*>(origin), pieces));
  }
  void get_pieces(const Where& w, std::byte* result, std::span<const Piece> pieces,
                  const RequestPtr& request) override {
    if (w.local) return DataPath::get_pieces(w, result, pieces, request);
    const Peer& p = s_.peers[w.target];
    drain(w.target);
    [[maybe_unused]] const auto held = hold(w, extent(pieces));
    cma::read(static_cast<pid_t>(p.pid), spans(p.base + w.at, result, pieces));
  }

  // Every completion point copies what is staged first.
  void flush(int target) override {
    drain(target);
    ProviderPath::flush(target);
  }
  void flush_all() override {
    drain_all();
    ProviderPath::flush_all();
  }
  void complete_when_drained(int target, const RequestPtr& request) override {
    target < 0 ? drain_all() : drain(target);
    ProviderPath::complete_when_drained(target, request);
  }
  void notify(int target, std::size_t index, const RequestPtr& request) override {
    drain(target);
    ProviderPath::notify(target, index, request);
  }

 private:
  static std::vector<cma::Piece> spans(std::uint64_t remote, std::byte* local, std::span<const Piece> pieces) {
    std::vector<cma::Piece> out;
    out.reserve(pieces.size());
    for (const Piece& q : pieces) out.push_back({local + q.origin, remote + q.target, q.bytes});
    return out;
  }
  auto hold(const Where& w, std::size_t bytes) const {
    const PublishedRegions::Range one{s_.peers[w.target].base + w.at, bytes};
    return reach_.hold(s_, w.target, std::span(&one, 1));
  }
  // Staging into one of a target's two stages drains the other, so only
  // two threads staging at once leave both full, and nothing orders their
  // ops: the order here does not matter.
  void drain(int target) {
    puts_.drain(target, write_);
    gets_.drain(target, read_);
  }
  void drain_all() {
    for (int t = 0; t < s_.nranks; ++t) drain(t);
  }
  // A stage's copy: every piece in one process_vm_writev or readv, each
  // piece held where memory may go away.
  template <bool kWrite>
  void copy_staged(int target, std::span<const cma::Piece> pieces) {
    std::vector<PublishedRegions::Range> ranges;
    if constexpr (!std::is_same_v<Reach, WholeWindow>) {
      ranges.reserve(pieces.size());
      for (const cma::Piece& q : pieces) ranges.push_back({q.remote, q.bytes});
    }
    [[maybe_unused]] const auto held = reach_.hold(s_, target, ranges);
    const auto pid = static_cast<pid_t>(s_.peers[target].pid);
    kWrite ? cma::write(pid, pieces) : cma::read(pid, pieces);
  }

  CrossMemoryAtomics atomics_;
  Reach reach_;
  StagedCopies puts_, gets_;
  using Copy = std::function<void(int, std::span<const cma::Piece>)>;
  Copy write_ = [this](int t, std::span<const cma::Piece> p) { copy_staged<true>(t, p); };
  Copy read_ = [this](int t, std::span<const cma::Piece> p) { copy_staged<false>(t, p); };
};

template <class Reach>
std::unique_ptr<DataPath> made(WindowState& state, SoftwareAtomics*& software, std::shared_ptr<void> mapping,
                               SharedLockWord* atomic_words, Reach reach) {
  auto path = std::make_unique<CrossMemoryPath<Reach>>(state, std::move(mapping), atomic_words, std::move(reach));
  software = &path->software();
  return path;
}

}  // namespace

std::unique_ptr<DataPath> cross_memory_path(WindowState& state, SoftwareAtomics*& software,
                                            std::shared_ptr<void> mapping, SharedLockWord* atomic_words,
                                            std::shared_ptr<PublishedRegions> attached) {
  if (attached) return made(state, software, std::move(mapping), atomic_words, Attached{std::move(attached)});
  return made(state, software, std::move(mapping), atomic_words, WholeWindow{});
}

}  // namespace onesided::detail
