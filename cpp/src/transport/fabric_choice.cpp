// Invariants: touches no state of its own; every fi_* call goes through
// fabric_library() (the libfabric this process chose); the hints are
// freed on every path, the provider name lent to them taken back first.
#include "transport/fabric_choice.hpp"

#include <cstdlib>
#include <string>

#include "onesided/error.hpp"
#include "transport/fabric_library.hpp"

namespace onesided::detail {

fi_info* choose_fabric_info(const std::string& provider, bool loopback) {
  constexpr unsigned kApiVersion = FI_VERSION(1, 9);
  constexpr std::uint64_t kAtomicOrder =
      FI_ORDER_ATOMIC_RAR | FI_ORDER_ATOMIC_RAW | FI_ORDER_ATOMIC_WAR | FI_ORDER_ATOMIC_WAW;
  struct Variant {
    std::uint64_t caps, order;
  };
  const Variant variants[] = {{FI_MSG | FI_RMA | FI_ATOMIC, FI_ORDER_SAS | kAtomicOrder},
                              {FI_MSG | FI_RMA | FI_ATOMIC, FI_ORDER_SAS},
                              {FI_MSG | FI_RMA, FI_ORDER_SAS}};
  // When every peer is on this host, network providers bind to loopback
  // (the machine's other interfaces may not even route to each other).
  const char* env = std::getenv("FI_PROVIDER");
  const std::string effective = provider.empty() && env ? env : provider;
  const bool network = !effective.empty() && effective != "shm";
  const FabricLibrary& lib = fabric_library();
  fi_info* info = nullptr;
  int ret = -FI_ENODATA;
  for (const auto& v : variants) {
    fi_info* hints = lib.dupinfo(nullptr);  // fi_allocinfo()
    if (!hints) raise(ErrorCategory::Transport, "fi_allocinfo failed");
    hints->caps = v.caps;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->ep_attr->type = FI_EP_RDM;
    hints->tx_attr->msg_order = v.order;
    hints->rx_attr->msg_order = v.order;
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    // The transport serialises all fi_* calls under one mutex, which is what
    // FI_THREAD_DOMAIN asks of us.
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    // Lent, not strdup'ed: libfabric frees with the allocator it binds to
    // (RTLD_DEEPBIND: libc's), which may not be the one onesided's strdup
    // binds to (an LD_PRELOADed malloc). Taken back before freeinfo.
    std::string prov_name = provider;
    if (!provider.empty()) hints->fabric_attr->prov_name = prov_name.data();
    if (loopback && network) ret = lib.getinfo(kApiVersion, "127.0.0.1", nullptr, FI_SOURCE, hints, &info);
    if (ret != 0) ret = lib.getinfo(kApiVersion, nullptr, nullptr, 0, hints, &info);
    hints->fabric_attr->prov_name = nullptr;
    lib.freeinfo(hints);
    if (ret == 0) return info;
  }
  raise(ErrorCategory::Transport,
        "fi_getinfo found no provider '" + (provider.empty() ? std::string("(any)") : provider) +
            "' with FI_EP_RDM, FI_MSG|FI_RMA and ordered messages: " + lib.strerror(-ret) + " (libfabric " +
            lib.path + ")");
}

AtomicOrder atomic_order_of(const fi_info& info) {
  const std::uint64_t order = info.tx_attr->msg_order;
  AtomicOrder out;
  out.rar = order & FI_ORDER_ATOMIC_RAR;
  out.raw = order & FI_ORDER_ATOMIC_RAW;
  out.war = order & FI_ORDER_ATOMIC_WAR;
  out.waw = order & FI_ORDER_ATOMIC_WAW;
  out.raw_size = info.ep_attr->max_order_raw_size;
  out.war_size = info.ep_attr->max_order_war_size;
  out.waw_size = info.ep_attr->max_order_waw_size;
  return out;
}

}  // namespace onesided::detail
