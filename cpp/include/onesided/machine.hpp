// What onesided sees of the machine it runs on, for diagnostics (`python -m
// onesided info`, or a C++ program's own report): the providers the
// process's libfabric offers and the key that decides which ranks share
// memory. Neither creates an endpoint or opens a window.
#pragma once

#include <string>
#include <vector>

namespace onesided {

// One answer of libfabric's fi_getinfo with no hints: a provider ("tcp;ofi_rxm"
// is a core provider under a utility one) on one domain (an interface, a device).
struct ProviderOffer {
  std::string provider;
  unsigned major = 0, minor = 0;  // the provider's own version
  std::string fabric;
  std::string domain;
  bool rdm = false;      // reliable datagram endpoints (FI_EP_RDM), which onesided needs
  bool rma = false;      // FI_MSG and FI_RMA, which onesided needs
  bool atomics = false;  // FI_ATOMIC: native atomics offered at all
};

// Every provider and domain the process's libfabric (runtime.hpp,
// load_libfabric) offers under this process's environment, in libfabric's
// order of preference (FI_PROVIDER and the other FI_* variables filter it as
// they filter a window's choice). Raises Transport with fi_strerror's text if
// fi_getinfo fails for any reason but finding nothing (then: empty).
std::vector<ProviderOffer> offered_providers();

// This process's host key: two processes take the shared-memory path
// between them only when their keys are equal. "boot=... shm=... ipc=...
// pid=... net=..." (cpp/src/memory/host_identity.hpp says why each part).
std::string host_key();

}  // namespace onesided
