// The cross-memory path: a Create window whose ranks are all on this host
// and can reach each other's memory (probed at creation) moves puts and
// gets by cross-memory attach instead of through the provider.
//
// Invariants:
//  - Memory touched: puts and gets copy straight between this process and
//    the target's window with process_vm_writev/readv, in the calling
//    thread; accumulate-style ops stay on the provider path's routes, the
//    window's single atomic path.
//  - Locks: none.
//  - Order and completion: a put or get is complete at the target when its
//    call returns; puts and gets stay unordered with respect to each other
//    as MPI allows. Atomics complete as on the provider path.
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
};

}  // namespace

std::unique_ptr<DataPath> cross_memory_path(WindowState& state, SoftwareAtomics*& software) {
  auto path = std::make_unique<CrossMemoryPath>(state);
  software = &path->software();
  return path;
}

}  // namespace onesided::detail
