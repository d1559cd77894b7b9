// The provider path (see provider_path.cpp for its invariants); a class
// here because the cross-memory path refines it.
#pragma once

#include <array>

#include "paths/atomic_routes.hpp"
#include "paths/gathered_gets.hpp"
#include "paths/scattered_puts.hpp"

namespace onesided::detail {

class ProviderPath : public DataPath {
 public:
  explicit ProviderPath(WindowState& s);

  const std::string& name() const override { return name_; }
  const std::string& description() const override { return description_; }
  bool completes_in_call() const override { return false; }
  bool incoming_needs_polls() const override { return true; }
  bool in_flight() const override { return ops_.in_flight(); }
  std::string ordering() const override;

  void put(const Where& w, const void* origin, std::size_t bytes, const RequestPtr& request) override;
  void get(const Where& w, void* result, std::size_t bytes, const RequestPtr& request) override;
  // Up to the provider's iov limits per fi_writemsg/fi_readmsg; many short
  // pieces of a put as Scatter messages (scattered_puts.hpp), of a get as
  // Gather messages (gathered_gets.hpp).
  void put_pieces(const Where& w, const std::byte* origin, std::span<const Piece> pieces,
                  const RequestPtr& request) override;
  void get_pieces(const Where& w, std::byte* result, std::span<const Piece> pieces,
                  const RequestPtr& request) override;
  void accumulate(const Where& w, const AtomicCall& call, const RequestPtr& request) override;
  // A strided fetching call of a native dtype as vectored atomics (up to the
  // provider's atomic stretch limit each), one of a software dtype in short
  // chunks as AtomicRuns messages; anything else chunk by chunk.
  void accumulate_nest(const Where& w, const AtomicCall& c, const Nest<3>& nest, const RequestPtr& request) override;
  void flush(int target) override { ops_.flush(target); }
  void flush_all() override { ops_.flush_all(); }
  void complete_when_drained(int target, const RequestPtr& request) override {
    ops_.complete_when_drained(target, request);
  }
  void expect_incoming(int delta) override { s_.endpoint->progress().expect_traffic(delta); }
  void notify(int target, std::size_t index, const RequestPtr& request) override {
    ops_.notify_after(target, index, request);
  }
  std::string notification() const override {
    return "a Notify message through provider " + s_.provider +
           ", sent once the operations it follows are complete at the target";
  }

  SoftwareAtomics& software() { return software_; }

 protected:
  ProviderPath(WindowState& s, std::string name, std::string description);
  WindowState& s_;

 private:
  static bool needs_order(const WindowState& s);
  std::string name_, description_;
  InFlightOps ops_;
  std::unique_ptr<OrderKeeper> order_;  // null: native atomics keep every required order
  NativeAtomics native_;
  SoftwareAtomics software_;
  ScatteredPuts scattered_;
  GatheredGets gathered_;
  std::array<AtomicRoute*, kNumDtypes> routes_{};  // per dtype: &native_ or &software_
  bool any_native_ = false, any_software_ = false;
};

}  // namespace onesided::detail
