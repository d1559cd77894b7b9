// Software read-modify-write kernels: the reference semantics of every op in
// the table, used wherever the provider offers no native atomic.
#pragma once

#include <cstddef>

#include "onesided/types.hpp"

namespace onesided::kernels {

// For each of `count` elements of type `d` (which need not be aligned):
// result[i] receives target[i] as it was before (when result is not null),
// then target[i] = op(target[i], origin[i], origin2[i]). The caller has checked
// op_applies(op, d) and holds whatever lock makes the call atomic.
void apply(Op op, Dtype d, void* target, const void* origin, const void* origin2, void* result,
           std::size_t count);

}  // namespace onesided::kernels
