// The race checker's hooks (onesided/races.hpp): set once at import by the
// binding, read by checking windows only.
#include <cstdio>

#include "onesided/races.hpp"

namespace onesided::races {
namespace {

std::uint32_t unknown_site() { return 0; }
std::string unknown_text(std::uint32_t) { return "?"; }
void to_stderr(const std::string& text) { std::fprintf(stderr, "onesided race checker: %s\n", text.c_str()); }

Hooks& current() {
  static Hooks h{unknown_site, unknown_text, to_stderr};
  return h;
}

}  // namespace

void set_hooks(const Hooks& hooks) {
  Hooks& h = current();
  if (hooks.site) h.site = hooks.site;
  if (hooks.site_text) h.site_text = hooks.site_text;
  if (hooks.warn) h.warn = hooks.warn;
}

const Hooks& hooks() { return current(); }

}  // namespace onesided::races
