// onesided/machine.hpp: the providers on offer are libfabric's own answer
// (shm is always there on Linux, tcp;ofi_rxm with sockets), filtered by
// FI_PROVIDER as a window's choice is; the public host key is the one the
// shared-memory decision uses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "memory/host_identity.hpp"
#include "onesided/machine.hpp"

namespace {

bool offers(const std::vector<onesided::ProviderOffer>& all, const std::string& name) {
  return std::any_of(all.begin(), all.end(), [&](const auto& o) { return o.provider == name && o.rdm && o.rma; });
}

TEST(Machine, OffersShmAndTcpWithRdmAndRma) {
  const auto all = onesided::offered_providers();
  EXPECT_TRUE(offers(all, "shm"));
  EXPECT_TRUE(offers(all, "tcp;ofi_rxm"));
  for (const auto& o : all) {
    EXPECT_FALSE(o.provider.empty());
    EXPECT_FALSE(o.domain.empty());
  }
}

TEST(Machine, HostKeyIsTheSharedMemoryDecisionsKey) {
  EXPECT_EQ(onesided::host_key(), onesided::detail::host_key());
  EXPECT_NE(onesided::host_key().find("boot="), std::string::npos);
}

}  // namespace
