// Errors raised by the onesided core. Every failure carries a category so the
// Python binding can translate it, in one place, into the matching subclass of
// onesided.Error; the message names the rule that was broken.
#pragma once

#include <stdexcept>
#include <string>

namespace onesided {

enum class ErrorCategory {
  Argument,     // malformed call: mismatched counts or dtypes, read-only buffers
  Bounds,       // a target range outside the target's window
  Epoch,        // an operation or synchronisation call in the wrong epoch state
  Unsupported,  // an (op, dtype) combination that has no meaning
  OpSet,        // an op outside the set the window declared in accumulate_ops
  Transport,    // libfabric (or bootstrap) reported a failure
  Internal,     // a broken invariant inside onesided itself
  Interrupted,  // a wait ended because the interrupt hook asked (interrupt.hpp)
  Race,         // the race checker found conflicting accesses (onesided_check=races:error)
};

class Error : public std::runtime_error {
 public:
  Error(ErrorCategory category, const std::string& message)
      : std::runtime_error(message), category_(category) {}
  ErrorCategory category() const noexcept { return category_; }

 private:
  ErrorCategory category_;
};

[[noreturn]] inline void raise(ErrorCategory category, const std::string& message) {
  throw Error(category, message);
}

}  // namespace onesided
