// Gathered gets; the invariants are in gathered_gets.hpp.
#include "paths/gathered_gets.hpp"

#include <cstring>
#include <memory>
#include <string>

namespace onesided::detail {

void GatheredGets::get(const Where& w, std::byte* result, std::span<const Piece> pieces,
                       const RequestPtr& request) {
  const std::size_t room = piece_message_room(s_.endpoint->transport());
  std::vector<PieceRun> runs;
  for (std::size_t first = 0, data = 0; first < pieces.size();) {
    // The request carries the runs, the reply the bytes: each within a message.
    const std::size_t end = plan_runs(pieces, first, runs, data, [&](std::size_t n, std::size_t bytes) {
      return n * sizeof(PieceRun) <= room && bytes <= room;
    });
    auto plan = std::make_shared<GatherPlan>(GatherPlan{result, {pieces.begin() + first, pieces.begin() + end}, data});
    InFlightOps::Op* pending = ops_.begin(w.target, request);
    pending->result = plan.get();
    pending->gathered = true;
    pending->keep = std::move(plan);
    Header h = s_.header(MsgKind::Gather, w.target, reinterpret_cast<std::uint64_t>(pending));
    h.count = static_cast<std::uint32_t>(runs.size());
    h.offset = w.at;
    InFlightOps::submit(pending, [&](InFlightOps::Op*) {
      s_.send(w.target, h, runs.data(), runs.size() * sizeof(PieceRun));
    });
    first = end;
  }
}

void GatheredGets::reply(const WindowState& s, const Header& h, const char* error, const std::byte* data,
                         std::size_t len) {
  const int origin = static_cast<int>(h.origin);
  if (!error) return s.send(origin, s.header(MsgKind::GatherDone, origin, h.token), data, len);
  s.send(origin, s.header(MsgKind::GatherDone, origin, h.token, kFailed), error, std::strlen(error));
}

void GatheredGets::on_reply(const Header& h, const std::byte* payload, std::size_t len) {
  auto* pending = reinterpret_cast<InFlightOps::Op*>(h.token);
  if (h.flags & kFailed) {
    const std::string reason(reinterpret_cast<const char*>(payload), len);
    return pending->complete(reason.c_str());
  }
  // The target sent exactly the bytes asked for; anything else is refused
  // rather than written short or past the pieces.
  const auto* plan = static_cast<const GatherPlan*>(pending->result);
  if (len != plan->bytes) return pending->complete("gathered get: the reply's size is not the pieces'");
  plan->place(payload);
  pending->complete(nullptr);
}

}  // namespace onesided::detail
