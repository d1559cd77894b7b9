// What a window says about itself: the memory model, Get_info's report,
// and the accessors of the public API.
#include "window/impl.hpp"

namespace onesided {

using namespace detail;

namespace {

// Every provider onesided knows places RMA data straight into host memory
// that local loads read, with no separate public copy: the unified model.
// A provider onesided has not checked gets the conservative answer.
bool unified_provider(const std::string& provider) {
  const std::string name = provider.substr(0, provider.find(';'));
  for (const char* p : {"shm", "tcp", "sockets", "udp", "verbs", "efa", "cxi", "psm2", "psm3", "opx", "ucx"})
    if (name == p) return true;
  return false;
}

}  // namespace

// Shared windows are plain shared memory; the providers onesided knows
// write straight into the exposed memory.
Model Window::Impl::model() const {
  return s.flavor == Flavor::Shared || unified_provider(s.provider) ? Model::Unified : Model::Separate;
}

Info Window::Impl::info() const {
  int native = 0;
  for (const auto& d : kDtypes) native += s.plan.path(d.id).native;
  return Info{
      {"provider", s.provider},
      {"accumulate_ordering", s.ordering.str()},
      {"accumulate_ops", s.declared.str()},
      {"mpi_accumulate_granularity", std::to_string(s.accumulate_granularity)},
      // One word a program can compare; win.atomics has the per-dtype detail.
      {"atomics", native == 0                                ? "software"
                  : native == static_cast<int>(kNumDtypes) ? "native"
                                                           : "mixed"},
      {"memory_model", model() == Model::Unified ? "unified" : "separate"},
      {"onesided_path", path->name()},
      {"onesided_ordering", path->ordering()},
      {"onesided_nasty", config.nasty_seed ? "seed " + std::to_string(*config.nasty_seed) : "off"},
      {"onesided_shared_memory", config.shared_memory ? "on" : "off"},
      // The old key, kept for code that reads it: whether the window is
      // on the shared-memory path.
      {"onesided_fast_path", s.shared_memory_path ? "on" : "off"},
      {"onesided_put_get", path->description()},
      // Free releases the lock (release()); what it was is no longer needed.
      {"onesided_locks", window_lock ? window_lock->where() : "released: the window has been freed"},
      {"onesided_notifications", std::to_string(notify_counters.size())},
      {"onesided_notify", notify_counters.size() ? path->notification() : "none"},
  };
}

Window::Window(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Window::~Window() {
  // In a child made by fork() the window is the parent's: tearing it down
  // would take locks the parent's threads may have held at the fork (a
  // deadlock) and touch the parent's provider objects. Let it be.
  if (impl_ && impl_->s.endpoint && impl_->s.endpoint->progress().forked()) (void)impl_.release();
  // Operations still in flight (a Free interrupted or given up, a window
  // dropped without Free) complete later into the window's bookkeeping,
  // from the progress thread: it is kept for the process's life rather
  // than freed under them (with what it still holds: a Free released the
  // exposed memory's registration already, a window dropped without Free
  // keeps it too).
  else if (in_flight()) (void)impl_.release();
}

void* Window::base() const { return impl_->s.base; }
std::size_t Window::size() const { return impl_->s.size; }
int Window::disp_unit() const { return impl_->s.disp_unit; }
int Window::rank() const { return impl_->s.rank; }
int Window::group_size() const { return impl_->s.nranks; }
Flavor Window::flavor() const { return impl_->s.flavor; }
Model Window::model() const { return impl_->model(); }
const std::string& Window::provider() const { return impl_->s.provider; }
Info Window::info() const { return impl_->info(); }
const std::string& Window::path_name() const { return impl_->path->name(); }
const std::string& Window::path_description() const { return impl_->path->description(); }
bool Window::completes_in_call() const { return impl_->path->completes_in_call(); }
bool Window::holds_get_results() const { return impl_->path->holds_get_results(); }
bool Window::in_flight() const { return impl_ && impl_->path && impl_->path->in_flight(); }

std::size_t Window::size_of(int target) const {
  impl_->s.check_rank(target);
  return impl_->s.peers[target].size;
}
int Window::disp_unit_of(int target) const {
  impl_->s.check_rank(target);
  return impl_->s.peers[target].disp_unit;
}

bool Window::native_atomics(Dtype dtype) const { return impl_->s.plan.path(dtype).native; }
const std::string& Window::atomics_reason(Dtype dtype) const { return impl_->s.plan.path(dtype).reason; }
std::size_t Window::native_count(Function f, Op op, Dtype dtype) const {
  return impl_->s.plan.native_count(f, op, dtype);
}

// MPI 4.1 (MPI_WIN_SHARED_QUERY): any flavor; a segment the caller cannot
// reach by load/store has size 0 and no memory. Reachable here: every
// segment of a window whose memory is one shared mapping (Allocate_shared;
// Allocate on the shared-memory path), and on every other window but a
// dynamic one the caller's own segment (its own memory is always reachable
// by its own loads). A dynamic window has no segment: always size 0. The
// disp_unit is the rank's, reachable or not.
SharedMemory Window::shared_query(int rank) const {
  const auto& s = impl_->s;
  const auto& seg = s.shared;
  auto size_of = [&](int r) { return seg ? seg->size(r) : static_cast<std::size_t>(s.peers[r].size); };
  if (rank == kProcNull) {
    rank = 0;
    for (int r = 0; r < s.nranks; ++r)
      if (size_of(r) > 0) {
        rank = r;
        break;
      }
  }
  s.check_rank(rank);
  const int unit = s.peers[rank].disp_unit;
  if (seg) return {seg->base(rank), seg->size(rank), unit, seg};
  if (rank == s.rank && s.flavor != Flavor::Dynamic && s.size > 0) return {s.base, s.size, unit, nullptr};
  return {nullptr, 0, unit, nullptr};
}

void Window::attach(void* base, std::size_t size) {
  impl_->s.check_live();
  impl_->addressing->attach(base, size);
}
void Window::detach(const void* base) {
  impl_->s.check_live();
  impl_->addressing->detach(base);
}

}  // namespace onesided
