// Window creation is collective: bad input on one rank must fail every rank
// alike, never leave the others waiting in the next collective step. So
// every factory checks its arguments locally first, then the ranks agree:
// one allgather of each rank's verdict and of the settings every rank must
// share, after which either every rank goes on or every rank raises the
// same Error.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "onesided/bootstrap.hpp"
#include "onesided/error.hpp"

namespace onesided::detail {

// Collective. `local`: this rank's error, if its arguments were bad.
// `settings`: what every rank must give alike (compared only when no rank
// failed). `extra`: anything else to share; returns every rank's extra.
// Raises at every rank, with the same category and message: the lowest
// failed rank's error, or an Argument error naming the differing settings.
std::vector<std::string> agree(Bootstrap& group, const std::optional<Error>& local, const std::string& settings,
                               const std::string& extra = {});

// Runs `check` and returns what it threw as an Error (std::bad_alloc and
// other exceptions become Argument errors), to be agreed on.
template <class Check>
std::optional<Error> verdict(Check&& check) {
  try {
    check();
  } catch (const Error& e) {
    return e;
  } catch (const std::bad_alloc&) {
    return Error(ErrorCategory::Argument, "the window's memory cannot be allocated (out of memory)");
  } catch (const std::exception& e) {
    return Error(ErrorCategory::Argument, e.what());
  }
  return std::nullopt;
}

}  // namespace onesided::detail
