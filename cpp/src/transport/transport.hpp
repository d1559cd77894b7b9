// The seam between onesided's RMA semantics and the network. Windows, epochs,
// locks, ordering and the software atomics are written against this
// interface only; fabric_transport.cpp is the single place that calls fi_*.
//
// Guarantees an implementation must give:
//  - write/read: `done` runs once the transfer is complete at both ends
//    (a write's data is visible in target memory: delivery complete).
//  - send: messages to one peer are delivered to its handler in the order
//    they were sent (FI_ORDER_SAS); the message bytes are copied, so the
//    caller may reuse its buffer at once.
//  - progress: any thread may call it; completions and incoming messages are
//    dispatched by one thread at a time, in the order the provider reported them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "common/provider_atomics.hpp"
#include "common/remote_region.hpp"
#include "onesided/types.hpp"

namespace onesided::detail {

class Completion {
 public:
  // `error` is null on success, else the provider's description of the failure.
  virtual void complete(const char* error) = 0;

  // The transport's own record of the operation (libfabric's op context
  // and what leads back here), kept in the Completion from the post until
  // complete() is called, so that posting allocates nothing. Only the
  // transport the Completion was posted to touches it.
  static constexpr std::size_t kTransportRoom = 80;
  alignas(16) std::byte transport_room[kTransportRoom];

 protected:
  ~Completion() = default;
};

class LocalRegion {
 public:
  virtual ~LocalRegion() = default;
  virtual RemoteRegion remote() const = 0;
};

class Transport {
 public:
  using MessageHandler = std::function<void(const std::byte* data, std::size_t len)>;

  virtual ~Transport() = default;
  virtual const std::string& provider() const = 0;
  virtual std::string address() const = 0;
  virtual PeerAddr insert_peer(const std::string& address) = 0;
  virtual std::unique_ptr<LocalRegion> register_region(void* base, std::size_t len) = 0;

  virtual void write(PeerAddr peer, const void* src, std::size_t len, RemoteRegion region,
                     std::uint64_t offset, Completion* done) = 0;
  virtual void read(PeerAddr peer, void* dst, std::size_t len, RemoteRegion region,
                    std::uint64_t offset, Completion* done) = 0;
  virtual void send(PeerAddr peer, const void* msg, std::size_t len) = 0;
  // A vectored write or read (a non-contiguous put or get): `bytes` between
  // `local` and `offset` in the region, for each stretch, as one operation
  // with one completion. At most max_stretches() stretches.
  struct Stretch {
    std::byte* local;
    std::uint64_t offset;
    std::size_t bytes;
  };
  virtual std::size_t max_stretches() const = 0;
  virtual void write_stretches(PeerAddr peer, std::span<const Stretch> stretches, RemoteRegion region,
                               Completion* done) = 0;
  virtual void read_stretches(PeerAddr peer, std::span<const Stretch> stretches, RemoteRegion region,
                              Completion* done) = 0;

  // Native atomics. native_count() is the largest element count one native
  // atomic of this kind, op and dtype may carry, 0 when the provider has no
  // native form (Op::Inc never has one: it is Sum with ones).
  virtual std::size_t native_count(AtomicKind kind, Op op, Dtype dtype) = 0;
  virtual AtomicOrder atomic_order() const = 0;
  // Empty, or why this provider offers no native atomics at all.
  virtual const std::string& native_unavailable() const = 0;
  // Fetch:   result = target; target = op(target, origin)   (origin unused for NoOp)
  // Compare: result = target; target = op(target, compare, origin), where
  //          `compare` is the comperand (or the mask of MaskSwap) and
  //          `origin` the value swapped in (libfabric's buf).
  // `done` runs once the atomic is complete at the target (and the result,
  // if any, has arrived).
  virtual void atomic(PeerAddr peer, AtomicKind kind, Op op, Dtype dtype, const void* origin,
                      const void* compare, void* result, std::size_t count, RemoteRegion region,
                      std::uint64_t offset, Completion* done) = 0;
  // A fetching native atomic over several stretches of the target (a
  // strided accumulate), as one operation with one completion: for each
  // stretch, `count` elements at `offset` in the region take `origin`'s
  // (null for NoOp), their old values going to `result`. At most
  // max_atomic_stretches() stretches, and in all at most native_count()
  // elements. max_atomic_stretches() is 1 when the provider's vectored
  // atomics were not found faithful (checked at open, like the scalar ones).
  struct AtomicStretch {
    const std::byte* origin;
    std::byte* result;
    std::uint64_t offset;
    std::size_t count;
  };
  virtual std::size_t max_atomic_stretches() const = 0;
  virtual void fetch_atomic_stretches(PeerAddr peer, Op op, Dtype dtype, std::span<const AtomicStretch> stretches,
                                      RemoteRegion region, Completion* done) = 0;
  virtual std::size_t max_message_size() const = 0;
  // The largest message that leaves at once (the provider copies it; no
  // rendezvous with the receiver's progress), 0 when there is none: what a
  // sender that can split its data fills.
  virtual std::size_t eager_message_size() const = 0;
  virtual void set_message_handler(MessageHandler handler) = 0;

  // Drives the provider and dispatches what completed; returns the number of
  // events dispatched. One thread progresses at a time: with `wait_turn`
  // false a call finding another thread progressing returns 0 at once; with
  // true it waits for that round to end (so everything that round took from
  // the provider has been dispatched) and then runs its own.
  virtual std::size_t progress(bool wait_turn) = 0;
};

// Opens the libfabric provider named `provider` ("shm", "tcp;ofi_rxm", ...;
// empty: whatever FI_PROVIDER or libfabric's own ranking picks). `loopback`
// asks network providers to bind to 127.0.0.1 because every peer is local.
std::unique_ptr<Transport> open_fabric_transport(const std::string& provider, bool loopback);

}  // namespace onesided::detail
