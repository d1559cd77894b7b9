// The race checker's two contacts with the language above the core
// (docs/checking.md): where a call came from, and how a finding is told.
// The Python binding sets them at import (bindings/register_races.cpp);
// without them a call site is "?" and findings go to stderr. They are
// called only by windows created with onesided_check=races.
#pragma once

#include <cstdint>
#include <string>

namespace onesided::races {

struct Hooks {
  // The source line of the call being made, interned: an id that
  // site_text() turns into "file.py:12". 0: unknown. Called on the thread
  // that makes the call, with or without the GIL.
  std::uint32_t (*site)() = nullptr;
  std::string (*site_text)(std::uint32_t) = nullptr;
  // Tells one finding as a warning (Python: RaceWarning) on the calling thread.
  void (*warn)(const std::string&) = nullptr;
};

void set_hooks(const Hooks& hooks);
const Hooks& hooks();

}  // namespace onesided::races
