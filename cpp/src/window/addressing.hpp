// How a target displacement becomes a checked place in the target's memory.
// Chosen at creation by flavor: a window's own extent (Create, Allocate,
// Allocate_shared) or a dynamic window's attached regions (regions.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "paths/data_path.hpp"
#include "state/window_state.hpp"

namespace onesided::detail {

class Addressing {
 public:
  virtual ~Addressing() = default;
  // The place of the `bytes` bytes that start `shift` bytes from `disp`
  // at `target` (a layout's extent may start before its displacement),
  // after checking they lie inside what the target exposes: a Bounds error
  // otherwise, before anything is sent. Overflow-safe for any arguments.
  virtual Where locate(int target, std::int64_t disp, std::int64_t shift, std::size_t bytes) = 0;
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

std::unique_ptr<Addressing> window_extent(WindowState& state);
std::unique_ptr<Addressing> attached_regions(WindowState& state);

}  // namespace onesided::detail
