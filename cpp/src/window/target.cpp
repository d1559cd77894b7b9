// Messages arriving for this window (from the endpoint's progress engine),
// each handed to the concern it belongs to. Replies to this rank's own
// requests arrive here too.
#include "paths/gathered_gets.hpp"
#include "paths/in_flight_ops.hpp"
#include "paths/scattered_puts.hpp"
#include "window/impl.hpp"

namespace onesided {

using namespace detail;

void Window::Impl::on_message(const Header& h, const std::byte* payload, std::size_t len) {
  const int origin = static_cast<int>(h.origin);
  if (origin < 0 || origin >= s.nranks) return;  // not from this group: ignore
  switch (h.kind) {
    case MsgKind::Atomic:
      // Only windows with software atomics are sent these.
      if (software) software->serve(h, payload, len, [&](std::uint64_t at, std::size_t bytes) {
        return addressing->local(at, bytes);
      });
      return;
    case MsgKind::AtomicRuns:
      if (software) software->serve_runs(h, payload, len, [&](std::uint64_t at, std::size_t bytes) {
        return addressing->local(at, bytes);
      });
      return;
    case MsgKind::Scatter:
      return ScatteredPuts::serve(s, h, payload, len,
                                  [&](std::uint64_t at, std::size_t bytes) { return addressing->local(at, bytes); });
    case MsgKind::ScatterDone:
      return ScatteredPuts::on_reply(h, payload, len);
    case MsgKind::Gather:
      return GatheredGets::serve(s, h, payload, len,
                                 [&](std::uint64_t at, std::size_t bytes) { return addressing->local(at, bytes); });
    case MsgKind::GatherDone:
      return GatheredGets::on_reply(h, payload, len);
    case MsgKind::AtomicDone:
      return SoftwareAtomics::on_reply(h, payload, len);
    case MsgKind::Lock:
    case MsgKind::LockGranted:
    case MsgKind::Unlock:
    case MsgKind::UnlockDone:
      return window_lock->on_message(h);
    case MsgKind::Post:
      posts_[origin].fetch_add(1, std::memory_order_release);
      return;
    case MsgKind::Complete:
      completes_[origin].fetch_add(1, std::memory_order_release);
      return;
    case MsgKind::Regions:
    case MsgKind::RegionsReply:
      return addressing->on_message(h, payload, len);
    case MsgKind::Notify:
      notify_counters.add(h.count);
      return s.send(origin, s.header(MsgKind::NotifyDone, origin, h.token));
    case MsgKind::NotifyDone:
      return InFlightOps::on_notify_done(h, origin);
    case MsgKind::Races:
      events->received(origin, payload, len);
      return s.send(origin, s.header(MsgKind::RacesDone, origin, h.token));
    case MsgKind::RacesDone:
      return events->acknowledged();
  }
}

}  // namespace onesided
