// Software atomics by piece runs: a strided accumulate-style call of a
// software dtype whose chunks are short (a column of a matrix) goes as
// AtomicRuns messages, each carrying the runs (piece_runs.hpp) and the
// operands of many pieces, where it went as one Atomic message per piece.
//
// Invariants (software_atomics.cpp's, per message):
//  - Memory touched: at the origin, reads of the origin buffer into the
//    message and, on the reply, the old values written into the result's
//    pieces (a GatherPlan per message, contiguous stretches merged), by
//    the thread that handles the reply; at the target, the
//    window's bytes each piece names, by the progress thread, after every
//    run of the message was checked to lie in the window and each piece to
//    hold whole elements (a message that fails is answered with a failure
//    and touches nothing).
//  - Locks: the target's atomic_mutex_, one hold per message with
//    mpi_accumulate_granularity 0, else apply_locked's units within each
//    piece: every software atomic on the window stays atomic with every
//    other, per element.
//  - Order: one origin's messages are applied in send order, and a
//    message's pieces in call order, so every accumulate_ordering pair is
//    kept as for Atomic messages; with an order keeper a message first
//    waits for earlier overlapping operations, like any other.
//  - Completion: each message is one InFlightOps operation, complete when
//    its AtomicDone arrives (with the old values when fetching).
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <vector>

#include "paths/atomic_routes.hpp"

namespace onesided::detail {

bool SoftwareAtomics::runs_suit(const Transport& t, const AtomicCall& bases, const Nest<3>& nest) {
  return op_info(bases.op).operands <= 1 && chunks_suit_messages(t, nest.chunk, nest.chunks());
}

void SoftwareAtomics::apply_nest(const Where& w, const AtomicCall& bases, const Nest<3>& nest,
                                 const RequestPtr& request) {
  const bool operand = op_info(bases.op).operands == 1;
  const auto* origin = static_cast<const std::byte*>(bases.origin);
  auto* result = static_cast<std::byte*>(bases.result);
  const std::size_t room = piece_message_room(s_.endpoint->transport());
  // Pieces in batches (a nest of a million chunks costs bounded memory),
  // each batch planned into as many messages as it needs.
  constexpr std::size_t kBatch = 1024;
  std::vector<Piece> batch;
  std::vector<std::int64_t> result_at;  // each piece's offset in the result
  batch.reserve(kBatch);
  result_at.reserve(result ? kBatch : 0);
  std::vector<PieceRun> runs;
  std::vector<std::byte> message(room);
  auto send = [&] {
    for (std::size_t first = 0, data = 0; first < batch.size();) {
      const std::size_t end = plan_runs(std::span<const Piece>(batch), first, runs, data,
                                        [&](std::size_t n, std::size_t bytes) {
                                          return n * sizeof(PieceRun) + (operand ? bytes : 0) <= room &&
                                                 bytes <= room;  // the reply's old values
                                        });
      const std::size_t head = runs.size() * sizeof(PieceRun);
      std::memcpy(message.data(), runs.data(), head);
      std::byte* out = message.data() + head;
      std::uint64_t lo = UINT64_MAX, hi = 0;
      std::shared_ptr<GatherPlan> plan;
      if (result) plan = std::make_shared<GatherPlan>(GatherPlan{result, {}});
      for (std::size_t i = first; i < end; ++i) {
        const Piece& p = batch[i];
        if (operand) {
          copy_piece(out, origin + p.origin, p.bytes);
          out += p.bytes;
        }
        if (plan) plan->add(result_at[i], p.target, p.bytes);
        lo = std::min(lo, w.at + p.target);
        hi = std::max(hi, w.at + p.target + p.bytes);
      }
      const Access part{lo, hi, result != nullptr, bases.op != Op::NoOp, Channel::Messages};
      if (order_) order_->wait_for_earlier(w.target, part);
      InFlightOps::Op* pending = ops_.begin(w.target, request);
      if (plan) {
        pending->result = plan.get();
        pending->gathered = true;
        pending->keep = std::move(plan);
      }
      if (order_) order_->record(w.target, pending->token, part);
      Header h = s_.header(MsgKind::AtomicRuns, w.target, reinterpret_cast<std::uint64_t>(pending),
                           result ? kFetch : 0);
      h.op = bases.op;
      h.dtype = bases.dtype;
      h.count = static_cast<std::uint32_t>(runs.size());
      h.offset = w.at;
      InFlightOps::submit(pending, [&](InFlightOps::Op*) {
        s_.send(w.target, h, message.data(), head + (operand ? data : 0));
      });
      first = end;
    }
    batch.clear();
    result_at.clear();
  };
  nest.for_each_chunk([&](const std::array<std::int64_t, 3>& at, std::uint64_t bytes) {
    batch.push_back({at[0], static_cast<std::uint64_t>(at[2]), bytes});
    if (result) result_at.push_back(at[1]);
    if (batch.size() == kBatch) send();
  });
  send();
}

}  // namespace onesided::detail
