// Window::epoch and Window::epoch_all: the Epoch handle (onesided/epoch.hpp)
// made from an open passive epoch. Everything the handle skips per call is
// checked here, once: a live window of this process, the epoch open on the
// handle's targets; and whether the handle is direct (the window's
// epoch_targets, set at creation on the plain shared-memory path).
#include <string>

#include "onesided/epoch.hpp"
#include "transport/fork_generation.hpp"
#include "window/impl.hpp"

namespace onesided {

using namespace detail;

std::vector<Epoch::Target> Window::Impl::load_store_targets(const WindowState& s) {
  std::vector<Epoch::Target> targets(static_cast<std::size_t>(s.nranks));
  for (int r = 0; r < s.nranks; ++r)
    targets[static_cast<std::size_t>(r)] = {s.shared->base(r), s.peers[r].size,
                                            static_cast<std::uint64_t>(s.peers[r].disp_unit)};
  return targets;
}

// Under epochs.mutex, with the epoch checked open: the generation read here
// is the one its close will bump.
Epoch Window::Impl::make_epoch(unsigned first, unsigned count, std::size_t generation) {
  Epoch e;
  e.generation_ = &epochs.generation[generation];
  e.opened_ = e.generation_->load(std::memory_order_relaxed);
  e.forks_ = &fork_generation_word();
  e.forks_at_open_ = e.forks_->load(std::memory_order_relaxed);
  e.first_ = first;
  e.count_ = count;
  e.nranks_ = static_cast<unsigned>(s.nranks);
  for (Function f : kFunctions)
    for (const OpInfo& op : kOps)
      if (function_admits(f, op.id) && s.declared.contains(f, op.id))
        e.admitted_[static_cast<std::size_t>(f)] |= std::uint32_t{1} << static_cast<unsigned>(op.id);
  e.direct_ = !epoch_targets.empty();
  if (e.direct_) {
    e.targets_ = epoch_targets.data();
    e.publication_ = s.publication.own_word();
  }
  return e;
}

Epoch Window::epoch(int target) {
  impl_->s.check_live();
  impl_->s.check_rank(target);
  std::lock_guard lk(impl_->epochs.mutex);
  if (!impl_->epochs.state.locked(target))
    raise(ErrorCategory::Epoch, "epoch(" + std::to_string(target) + ") needs the passive epoch lock(" +
                                    std::to_string(target) + ") opens (after lock_all, use epoch_all)");
  Epoch e = impl_->make_epoch(static_cast<unsigned>(target), 1, static_cast<std::size_t>(target));
  e.window_ = this;
  return e;
}

Epoch Window::epoch_all() {
  impl_->s.check_live();
  std::lock_guard lk(impl_->epochs.mutex);
  if (!impl_->epochs.state.lock_all())
    raise(ErrorCategory::Epoch, "epoch_all() needs the passive epoch lock_all() opens");
  Epoch e = impl_->make_epoch(0, static_cast<unsigned>(impl_->s.nranks), static_cast<std::size_t>(impl_->s.nranks));
  e.window_ = this;
  return e;
}

void Epoch::raise_closed() const {
  if (forks_->load(std::memory_order_relaxed) != forks_at_open_) raise_forked("the epoch's window");
  raise(ErrorCategory::Epoch, window_ ? "the epoch this handle was made in has ended (unlock, unlock_all or free "
                                        "since): take a new handle from the new epoch"
                                      : "a default-constructed Epoch has no epoch: take one from Window::epoch "
                                        "or epoch_all");
}

}  // namespace onesided
