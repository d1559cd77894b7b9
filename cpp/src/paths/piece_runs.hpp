// Piece runs: how a batch of short pieces of a non-contiguous put or get
// travels in one message (scattered_puts.hpp, gathered_gets.hpp). A run is
// `count` pieces of `bytes` each, the first `offset` bytes past the
// message's Header::offset, each next one `stride` bytes (of either sign)
// after the one before: a column of a matrix is one run whatever its length.
//
// The origin plans runs from pieces (plan_runs); the target checks every
// run of a message before it touches any byte (CheckedRuns): a message
// whose runs reach outside the window is answered with a failure and moves
// nothing.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "layout/runs.hpp"
#include "paths/data_path.hpp"
#include "transport/protocol.hpp"
#include "transport/transport.hpp"

namespace onesided::detail {

struct PieceRun {
  std::uint64_t offset;
  std::int64_t stride;
  std::uint64_t bytes;
  std::uint64_t count;
};

// Where one reply's bytes go at the origin, piece by piece (a gathered
// get's pieces, a strided software atomic's old values): each piece's
// `origin` is its offset from `result`, and the reply holds the pieces'
// bytes in order. Kept with its operation (InFlightOps::Op::keep, with
// Op::gathered set) until the reply is written.
struct GatherPlan {
  std::byte* result;
  std::vector<Piece> pieces;
  std::size_t bytes = 0;  // the pieces' bytes in total: what the reply must hold

  // Appends a piece, merged into the last one when it continues it (a
  // contiguous result is one piece).
  void add(std::int64_t origin, std::uint64_t target, std::size_t n) {
    if (!pieces.empty() && pieces.back().origin + static_cast<std::int64_t>(pieces.back().bytes) == origin)
      pieces.back().bytes += n;
    else
      pieces.push_back({origin, target, n});
    bytes += n;
  }
  // Writes a reply of exactly `bytes` bytes into the pieces.
  void place(const std::byte* payload) const {
    for (const Piece& p : pieces) {
      copy_piece(result + p.origin, payload, p.bytes);
      payload += p.bytes;
    }
  }
};

// Payload bytes per piece message: messages that leave at once where the
// provider has them and they are not tiny (shm: 4 KiB; a larger message
// waits for a rendezvous with the target's progress, which costs more than
// sending two), else the largest.
std::size_t piece_message_room(const Transport& t);
// Whether `pieces` are better moved by messages than by vectored RMA of at
// most `stretches` each: more than one RMA's worth, every piece short
// (decided per batch, from its shape only).
bool pieces_suit_messages(const Transport& t, std::span<const Piece> pieces, std::size_t stretches);
// Whether `chunks` chunks of `chunk` bytes each (a nest's) are better moved
// by messages than one by one: more than one, each short.
bool chunks_suit_messages(const Transport& t, std::uint64_t chunk, std::uint64_t chunks);

// Plans pieces [first, end) into `runs` (cleared first) and returns end:
// as many pieces as `fits(runs, data bytes)` allows, at least one (the
// caller's pieces_suit_messages() saw that any one piece fits). A piece of the size of
// the last run's and one stride further extends it (the stride is set by
// its second piece); else it opens a new run.
template <class Fits>
std::size_t plan_runs(std::span<const Piece> pieces, std::size_t first, std::vector<PieceRun>& runs,
                      std::size_t& data, Fits&& fits) {
  runs.clear();
  data = 0;
  std::size_t end = first;
  for (; end < pieces.size(); ++end) {
    const Piece& p = pieces[end];
    bool extends = false;
    std::int64_t step = 0;
    if (!runs.empty()) {
      const PieceRun& r = runs.back();
      const std::uint64_t last = r.offset + static_cast<std::uint64_t>(r.stride) * (r.count - 1);
      step = static_cast<std::int64_t>(p.target - last);  // modular: any sign
      extends = r.bytes == p.bytes && (r.count == 1 || step == r.stride);
    }
    if (end > first && !fits(runs.size() + (extends ? 0 : 1), data + p.bytes)) break;
    if (extends) {
      if (runs.back().count == 1) runs.back().stride = step;
      ++runs.back().count;
    } else {
      runs.push_back({p.target, 0, p.bytes, 1});
    }
    data += p.bytes;
  }
  return end;
}

// A message's runs, checked at the target: every piece lies in the window
// (one span from the lowest piece to the end of the highest, on a window's
// one memory; on a dynamic window whose span crosses memory that is not
// attached, each piece on its own) and the pieces' bytes total at most
// `max_data`. `local(at, bytes)` finds the bytes of a checked range of this
// rank's window (null: outside it).
template <class Local>
class CheckedRuns {
 public:
  CheckedRuns(const Header& h, const std::byte* payload, std::size_t len, std::size_t max_data, Local& local)
      : h_(h), payload_(payload), n_(h.count), local_(local) {
    using i128 = __int128;
    if (len / sizeof(PieceRun) < n_) {
      error_ = "malformed piece runs";
      return;
    }
    i128 left = max_data, lo = UINT64_MAX, hi = 0;
    for (std::size_t i = 0; i < n_; ++i) {
      const PieceRun r = run(i);
      const i128 first = static_cast<i128>(h.offset) + r.offset;
      const i128 last = first + static_cast<i128>(r.stride) * (r.count ? r.count - 1 : 0);
      const i128 data = static_cast<i128>(r.bytes) * r.count;
      if (r.count == 0 || r.count > left || data > left || std::min(first, last) < 0 ||
          std::max(first, last) + r.bytes > UINT64_MAX) {
        error_ = "malformed piece runs";
        return;
      }
      left -= data;
      data_ += static_cast<std::size_t>(data);
      lo = std::min({lo, first, last});
      hi = std::max({hi, first + r.bytes, last + r.bytes});
    }
    if (n_ == 0) return;
    lo_ = static_cast<std::uint64_t>(lo);
    base_ = local_(lo_, static_cast<std::size_t>(hi - lo));
    if (!base_ && !each([&](std::byte* at, std::size_t) { return at != nullptr; }))
      error_ = "piece outside the window (checked at the target)";
  }

  // Null when every piece is in the window; else why not.
  const char* error() const { return error_; }
  // The pieces' bytes in total.
  std::size_t data() const { return data_; }
  std::size_t runs() const { return n_; }
  // f(address, bytes) for each piece in order, while f returns true.
  template <class F>
  bool each(F&& f) const {
    for (std::size_t i = 0; i < n_; ++i) {
      const PieceRun r = run(i);
      std::uint64_t at = h_.offset + r.offset;
      for (std::uint64_t k = 0; k < r.count; ++k, at += static_cast<std::uint64_t>(r.stride))
        if (!f(base_ ? base_ + (at - lo_) : local_(at, r.bytes), r.bytes)) return false;
    }
    return true;
  }

 private:
  PieceRun run(std::size_t i) const {
    PieceRun r;
    std::memcpy(&r, payload_ + i * sizeof(PieceRun), sizeof r);
    return r;
  }
  const Header& h_;
  const std::byte* payload_;
  std::size_t n_;
  Local& local_;
  const char* error_ = nullptr;
  std::size_t data_ = 0;
  std::uint64_t lo_ = 0;
  std::byte* base_ = nullptr;  // the span's bytes when it is one range of the window
};

}  // namespace onesided::detail
