// A Transport that moves nothing: every call succeeds and does nothing, no
// completion is ever reported, progress finds no event. Unit tests derive
// from it and override what they watch (the loopback checks' late
// atomics, the progress engine's polls).
#pragma once

#include <memory>
#include <span>
#include <string>

#include "transport/transport.hpp"

// In detail, beside the interface it implements (a test-only header).
namespace onesided::detail {

class NullTransport : public Transport {
 public:
  struct Region final : LocalRegion {
    void* base;
    explicit Region(void* b) : base(b) {}
    RemoteRegion remote() const override { return {}; }
  };

  const std::string& provider() const override { return name_; }
  std::string address() const override { return name_; }
  PeerAddr insert_peer(const std::string&) override { return 0; }
  std::unique_ptr<LocalRegion> register_region(void* base, std::size_t) override {
    return std::make_unique<Region>(base);
  }
  void write(PeerAddr, const void*, std::size_t, RemoteRegion, std::uint64_t, Completion*) override {}
  void read(PeerAddr, void*, std::size_t, RemoteRegion, std::uint64_t, Completion*) override {}
  void send(PeerAddr, const void*, std::size_t) override {}
  std::size_t max_stretches() const override { return 1; }
  void write_stretches(PeerAddr, std::span<const Stretch>, RemoteRegion, Completion*) override {}
  void read_stretches(PeerAddr, std::span<const Stretch>, RemoteRegion, Completion*) override {}
  std::size_t native_count(AtomicKind, Op, Dtype) override { return 1; }
  AtomicOrder atomic_order() const override { return {}; }
  const std::string& native_unavailable() const override { return none_; }
  void atomic(PeerAddr, AtomicKind, Op, Dtype, const void*, const void*, void*, std::size_t, RemoteRegion,
              std::uint64_t, Completion*) override {}
  std::size_t max_atomic_stretches() const override { return 2; }
  void fetch_atomic_stretches(PeerAddr, Op, Dtype, std::span<const AtomicStretch>, RemoteRegion,
                              Completion*) override {}
  std::size_t max_message_size() const override { return 4096; }
  std::size_t eager_message_size() const override { return 0; }
  void set_message_handler(MessageHandler) override {}
  std::size_t progress(bool) override { return 0; }

 protected:
  explicit NullTransport(std::string name) : name_(std::move(name)) {}

 private:
  std::string name_, none_;
};

}  // namespace onesided::detail
