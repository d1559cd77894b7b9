// offered_providers (onesided/machine.hpp): fi_getinfo with no hints on the
// process's libfabric, each answer reduced to what a diagnostic shows. Only
// the transport calls libfabric; this is the one call it makes for reports.
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <memory>

#include "onesided/error.hpp"
#include "onesided/machine.hpp"
#include "transport/fabric_library.hpp"

namespace onesided {

std::vector<ProviderOffer> offered_providers() {
  const auto& lib = detail::fabric_library();
  fi_info* head = nullptr;
  // The API version the transport asks for (fabric_transport.cpp): what a
  // window could be given, not what a newer caller might see.
  const int ret = lib.getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, nullptr, &head);
  if (ret == -FI_ENODATA) return {};
  if (ret != 0) raise(ErrorCategory::Transport, std::string("fi_getinfo: ") + lib.strerror(-ret));
  const std::unique_ptr<fi_info, void (*)(fi_info*)> owned(head, lib.freeinfo);
  std::vector<ProviderOffer> out;
  for (const fi_info* info = head; info; info = info->next) {
    if (!info->fabric_attr || !info->domain_attr) continue;  // never so in an answer; no reason to crash
    const auto text = [](const char* s) { return std::string(s ? s : ""); };
    out.push_back({
        .provider = text(info->fabric_attr->prov_name),
        .major = FI_MAJOR(info->fabric_attr->prov_version),
        .minor = FI_MINOR(info->fabric_attr->prov_version),
        .fabric = text(info->fabric_attr->name),
        .domain = text(info->domain_attr->name),
        .rdm = info->ep_attr && info->ep_attr->type == FI_EP_RDM,
        .rma = (info->caps & (FI_MSG | FI_RMA)) == (FI_MSG | FI_RMA),
        .atomics = (info->caps & FI_ATOMIC) != 0,
    });
  }
  return out;
}

}  // namespace onesided
