// Addressing on windows with one extent per rank: a displacement counts
// the target's disp_unit from the start of its window.
#include "window/addressing.hpp"

namespace onesided::detail {
namespace {

class WindowExtent final : public Addressing {
 public:
  explicit WindowExtent(WindowState& s) : s_(s) {}

  Where locate(int target, std::int64_t disp, std::int64_t shift, std::size_t bytes) override {
    const Peer& p = s_.peers[target];
    const auto limit = static_cast<__int128>(p.size);
    const auto off = static_cast<__int128>(disp) * p.disp_unit + shift;
    if (disp < 0 || off < 0 || off + static_cast<__int128>(bytes) > limit)
      raise(ErrorCategory::Bounds,
            "target range out of window: displacement " + std::to_string(disp) + " x disp_unit " +
                std::to_string(p.disp_unit) +
                (shift ? (shift > 0 ? " + " : " - ") + std::to_string(shift > 0 ? shift : -shift) +
                             " (the layout's first byte)"
                       : std::string()) +
                " + " + std::to_string(bytes) + " bytes exceeds the " + std::to_string(p.size) +
                "-byte window of rank " + std::to_string(target));
    const auto at = static_cast<std::uint64_t>(off);
    return {target, p.region, at, at, target == s_.rank ? s_.base + at : nullptr};
  }
  std::byte* local(std::uint64_t at, std::size_t bytes) override {
    return at <= s_.size && bytes <= s_.size - at ? s_.base + at : nullptr;
  }
  void epoch_started() override {}
  void attach(void*, std::size_t) override {
    raise(ErrorCategory::Argument, "Attach needs a window made by Create_dynamic");
  }
  void detach(const void*) override { raise(ErrorCategory::Argument, "Detach needs a window made by Create_dynamic"); }
  void on_message(const Header&, const std::byte*, std::size_t) override {}
  void release() override {}

 private:
  WindowState& s_;
};

}  // namespace

std::unique_ptr<Addressing> window_extent(WindowState& state) { return std::make_unique<WindowExtent>(state); }

}  // namespace onesided::detail
