// The cross-memory path: a Create window whose ranks are all on this host
// and can reach each other's memory (probed at creation) moves its data by
// cross-memory attach instead of through the provider, and needs no
// progress at the target.
//
// Invariants:
//  - Memory touched: puts and gets copy straight between this process and
//    the target's window with process_vm_writev/readv, in the calling
//    thread (a non-contiguous one as one vectored call). Accumulate-style
//    ops of every dtype take the cross-memory atomics
//    (cross_memory_atomics.hpp), the window's one atomic path: the calling
//    rank applies them under the target's atomic lock.
//  - Locks: the target's atomic lock word (shared memory), per atomic op.
//  - Order and completion: every op is complete at the target when its call
//    returns, so every accumulate_ordering pair is kept. Only notifications
//    travel through the provider (a Notify message, as on the provider
//    path), so flush(t) still waits for their acknowledgements; a window
//    without notification counters has nothing in flight ever
//    (completes_in_call: the bindings then keep the GIL, as on the
//    shared-memory path).
#include <vector>

#include "memory/cross_memory.hpp"
#include "paths/cross_memory_atomics.hpp"
#include "paths/paths.hpp"
#include "paths/provider_path.hpp"

namespace onesided::detail {
namespace {

class CrossMemoryPath final : public ProviderPath {
 public:
  CrossMemoryPath(WindowState& s, std::shared_ptr<void> mapping, SharedLockWord* atomic_words)
      : ProviderPath(s, "cross-memory",
                     "puts, gets and accumulate-style ops by cross-memory attach (process_vm_writev/readv), "
                     "atomics under the target's lock in shared memory; notifications through provider " +
                         s.provider),
        atomics_(s, std::move(mapping), atomic_words) {}

  // Every put, get and atomic is complete at the target when its call
  // returns; only a notification travels through the provider, so only a
  // window with notification counters has anything in flight.
  bool completes_in_call() const override { return s_.notifications == 0; }
  std::string ordering() const override {
    return "cross-memory path: each op takes effect before its call returns; every order kept";
  }
  void accumulate(const Where& w, const AtomicCall& call, const RequestPtr&) override { atomics_.apply(w, call); }

  void put(const Where& w, const void* origin, std::size_t bytes, const RequestPtr& request) override {
    if (w.local) return ProviderPath::put(w, origin, bytes, request);
    const Peer& p = s_.peers[w.target];
    cma::write(static_cast<pid_t>(p.pid), p.base + w.at, origin, bytes);
  }
  void get(const Where& w, void* result, std::size_t bytes, const RequestPtr& request) override {
    if (w.local) return ProviderPath::get(w, result, bytes, request);
    const Peer& p = s_.peers[w.target];
    cma::read(static_cast<pid_t>(p.pid), result, p.base + w.at, bytes);
  }
  // A non-contiguous put or get: every piece in one process_vm_writev/readv.
  void put_pieces(const Where& w, const std::byte* origin, std::span<const Piece> pieces,
                  const RequestPtr& request) override {
    if (w.local) return DataPath::put_pieces(w, origin, pieces, request);
    const Peer& p = s_.peers[w.target];
    cma::write(static_cast<pid_t>(p.pid), spans(p.base + w.at, const_cast<std::byte*>(origin), pieces));
  }
  void get_pieces(const Where& w, std::byte* result, std::span<const Piece> pieces,
                  const RequestPtr& request) override {
    if (w.local) return DataPath::get_pieces(w, result, pieces, request);
    const Peer& p = s_.peers[w.target];
    cma::read(static_cast<pid_t>(p.pid), spans(p.base + w.at, result, pieces));
  }

 private:
  static std::vector<cma::Piece> spans(std::uint64_t remote, std::byte* local, std::span<const Piece> pieces) {
    std::vector<cma::Piece> out;
    out.reserve(pieces.size());
    for (const Piece& q : pieces) out.push_back({local + q.origin, remote + q.target, q.bytes});
    return out;
  }
  CrossMemoryAtomics atomics_;
};

}  // namespace

std::unique_ptr<DataPath> cross_memory_path(WindowState& state, SoftwareAtomics*& software,
                                            std::shared_ptr<void> mapping, SharedLockWord* atomic_words) {
  auto path = std::make_unique<CrossMemoryPath>(state, std::move(mapping), atomic_words);
  software = &path->software();
  return path;
}

}  // namespace onesided::detail
