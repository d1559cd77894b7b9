// Which libfabric info a process's endpoint is opened from: the hints
// onesided asks with, and the fallbacks it settles for. Only the
// transport's files include this (they alone call fi_*).
#pragma once

#include <rdma/fabric.h>

#include <string>

#include "transport/transport.hpp"

namespace onesided::detail {

// The first info libfabric offers for `provider` ("" for its own choice,
// FI_PROVIDER honoured) with FI_EP_RDM and ordered messages, asking for the
// most onesided can use and settling for less: native atomics with ordered
// atomics, then atomics without order, then no atomics (every atomic then
// runs in software). With `loopback`, a network provider is asked to bind
// to 127.0.0.1 first (every peer is on this host). The caller owns the
// result (fabric_library().freeinfo). Raises Transport when none is offered.
fi_info* choose_fabric_info(const std::string& provider, bool loopback);

// The atomic ordering an info's endpoint keeps (FI_ORDER_ATOMIC_* and the
// max_order_*_size limits).
AtomicOrder atomic_order_of(const fi_info& info);

}  // namespace onesided::detail
