// A transport's native atomics are checked at open, not assumed: a window's
// native atomics include those a rank applies to its own memory, through
// the provider like everyone else's, so each form onesided uses is run once
// on this rank's own memory and its result compared.
#pragma once

#include <string>

#include "transport/transport.hpp"

namespace onesided::detail {

// Eight fetch-and-adds of 1 on one int64 cell, through `self` (this
// endpoint's own address): empty when every one completed with the old
// value and left the new one, else why not.
std::string loopback_atomics_fault(Transport& t, PeerAddr self, const std::string& provider);

// One fetch_atomic_stretches of two stretches over cells 0 and 2 of three
// (adding 1 and 2): whether both old values came back, both cells changed
// and cell 1 did not. Call with max_atomic_stretches() >= 2.
bool loopback_stretches_faithful(Transport& t, PeerAddr self);

}  // namespace onesided::detail
