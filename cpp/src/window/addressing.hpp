// How a target displacement becomes a checked place in the target's memory.
// Chosen at creation by flavor: a window's own extent (Create, Allocate,
// Allocate_shared) or a dynamic window's attached regions (regions.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "paths/data_path.hpp"
#include "state/window_state.hpp"

namespace onesided::detail {

// Receives each piece of a contiguous access (see Addressing::pieces): its
// place, its offset from the access's first byte, its size.
using PieceSink = void (*)(void* context, const Where& where, std::size_t offset, std::size_t bytes);

class Addressing {
 public:
  virtual ~Addressing() = default;
  // The place of the `bytes` bytes that start `shift` bytes from `disp`
  // at `target` (a layout's extent may start before its displacement),
  // after checking they lie inside what the target exposes: a Bounds error
  // otherwise, before anything is sent. Overflow-safe for any arguments.
  virtual Where locate(int target, std::int64_t disp, std::int64_t shift, std::size_t bytes) = 0;
  // The same check for a contiguous access, handing `sink` the pieces it
  // moves: one (no allocation: every call takes this road), or on a
  // dynamic window one per region where the range crosses regions attached
  // side by side (MPI 4.1 section 12.2.4 makes only an access to memory
  // that is not attached erroneous). Every piece is a whole number of
  // `unit`s (an element of an accumulate-style call is never split): a
  // Bounds error otherwise, before `sink` sees any piece. `bytes` > 0.
  virtual void pieces(int target, std::int64_t disp, std::size_t bytes, std::size_t unit, PieceSink sink,
                      void* context) {
    (void)unit;
    sink(context, locate(target, disp, 0, bytes), 0, bytes);
  }
  // Target side: this rank's bytes at position `at` (a Where's `at`), or
  // null when [at, at + bytes) is not its exposed memory.
  virtual std::byte* local(std::uint64_t at, std::size_t bytes) = 0;
  // An access epoch begins (Lock, Lock_all, Fence, Start): what origins
  // know of targets' memory may be out of date.
  virtual void epoch_started() = 0;
  virtual void attach(void* base, std::size_t size) = 0;
  virtual void detach(const void* base) = 0;
  // Regions / RegionsReply messages (dynamic windows only).
  virtual void on_message(const Header& h, const std::byte* payload, std::size_t len) = 0;
  // Drops what keeps memory registered (free).
  virtual void release() = 0;
};

// Addressing::pieces with a lambda f(where, offset, bytes) as the sink.
template <class F>
void each_piece(Addressing& a, int target, std::int64_t disp, std::size_t bytes, std::size_t unit, F&& f) {
  a.pieces(target, disp, bytes, unit,
           [](void* c, const Where& w, std::size_t at, std::size_t n) { (*static_cast<std::remove_reference_t<F>*>(c))(w, at, n); },
           &f);
}

std::unique_ptr<Addressing> window_extent(WindowState& state);
class RegionDirectory;
std::unique_ptr<Addressing> attached_regions(WindowState& state, std::unique_ptr<RegionDirectory> directory);

}  // namespace onesided::detail
