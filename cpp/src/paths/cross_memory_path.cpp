// The cross-memory path: a Create window whose ranks are all on this host
// and can reach each other's memory (probed at creation) moves puts and
// gets by cross-memory attach instead of through the provider.
//
// Invariants:
//  - Memory touched: puts and gets copy straight between this process and
//    the target's window with process_vm_writev/readv, in the calling
//    thread (a non-contiguous one as one vectored call); accumulate-style ops stay on the provider path's routes, the
//    window's single atomic path.
//  - Locks: none.
//  - Order and completion: a put or get is complete at the target when its
//    call returns; puts and gets stay unordered with respect to each other
//    as MPI allows. Atomics complete as on the provider path.
#include <vector>

#include "memory/cross_memory.hpp"
#include "paths/paths.hpp"
#include "paths/provider_path.hpp"

namespace onesided::detail {
namespace {

class CrossMemoryPath final : public ProviderPath {
 public:
  explicit CrossMemoryPath(WindowState& s)
      : ProviderPath(s, "cross-memory",
                     "puts and gets by cross-memory attach (process_vm_writev/readv); accumulate-style ops "
                     "through provider " + s.provider) {}

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
};

}  // namespace

std::unique_ptr<DataPath> cross_memory_path(WindowState& state, SoftwareAtomics*& software) {
  auto path = std::make_unique<CrossMemoryPath>(state);
  software = &path->software();
  return path;
}

}  // namespace onesided::detail
