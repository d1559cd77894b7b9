#include "order/nasty.hpp"

#include <cstdlib>

#include "onesided/error.hpp"

namespace onesided::detail {

std::optional<std::uint64_t> NastyQueue::seed_from(const std::string* info_value) {
  const char* env = std::getenv("ONESIDED_NASTY");
  std::string v = info_value ? *info_value : env ? env : "";
  if (v.empty() || v == "0" || v == "false" || v == "off") return std::nullopt;
  std::uint64_t seed = 0x6e61737479ull;  // "nasty"
  if (v != "1" && v != "true" && v != "on") {
    char* end = nullptr;
    seed = std::strtoull(v.c_str(), &end, 10);
    if (!end || *end != '\0')
      raise(ErrorCategory::Argument, "onesided_nasty (or ONESIDED_NASTY) must be true, false or an integer seed, not '" + v + "'");
  }
  return seed;
}

void NastyQueue::hold(HeldOp op) {
  std::lock_guard lk(mutex_);
  held_.push_back(std::move(op));
}

bool NastyQueue::empty() {
  std::lock_guard lk(mutex_);
  return held_.empty();
}

std::vector<HeldOp> NastyQueue::release(int target, const OrderRule& rule) {
  std::lock_guard lk(mutex_);
  std::vector<HeldOp> mine, rest;
  for (auto& op : held_) (target < 0 || op.target == target ? mine : rest).push_back(std::move(op));
  held_ = std::move(rest);
  // Random topological order: op j may go only after every earlier op i it
  // must follow (same thread, same target, an order the window requires).
  const std::size_t n = mine.size();
  std::vector<std::vector<std::size_t>> after(n);  // i -> the ops waiting for i
  std::vector<std::size_t> blockers(n, 0);
  for (std::size_t j = 0; j < n; ++j) {
    if (!mine[j].accumulate) continue;
    for (std::size_t i = 0; i < j; ++i) {
      const HeldOp& a = mine[i];
      const HeldOp& b = mine[j];
      if (a.accumulate && a.target == b.target && a.thread == b.thread &&
          rule.requires_order(a.access, b.access)) {
        after[i].push_back(j);
        ++blockers[j];
      }
    }
  }
  std::vector<std::size_t> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (blockers[i] == 0) ready.push_back(i);
  std::vector<HeldOp> out;
  out.reserve(n);
  while (!ready.empty()) {
    std::uniform_int_distribution<std::size_t> pick(0, ready.size() - 1);
    const std::size_t k = pick(rng_);
    const std::size_t i = ready[k];
    ready[k] = ready.back();
    ready.pop_back();
    out.push_back(std::move(mine[i]));
    for (std::size_t j : after[i])
      if (--blockers[j] == 0) ready.push_back(j);
  }
  return out;
}

}  // namespace onesided::detail
