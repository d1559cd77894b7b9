// Native frames of a faulting thread (onesided/fatal_backtrace.hpp).
//
// The handler runs in the faulting thread and uses only async-signal-safe
// calls: write(2), prctl(PR_GET_NAME), gettid, sigaction, raise, and
// backtrace/backtrace_symbols_fd, whose lazy loading of libgcc_s is done
// once when armed. `previous` is written once, under call_once, before any
// handler that reads it is installed.
#include "onesided/fatal_backtrace.hpp"

#include <execinfo.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <mutex>

namespace onesided {
namespace {

constexpr std::array kSignals{SIGSEGV, SIGBUS, SIGILL, SIGFPE};
struct sigaction previous[NSIG];

void put(const char* text) {
  for (std::size_t done = 0, n = std::strlen(text); done < n;) {
    const ssize_t w = ::write(STDERR_FILENO, text + done, n - done);
    if (w <= 0) return;
    done += static_cast<std::size_t>(w);
  }
}

void put_number(long value) {
  char digits[24];
  char* p = digits + sizeof digits;
  *--p = '\0';
  const bool negative = value < 0;
  unsigned long v = negative ? 0UL - static_cast<unsigned long>(value) : static_cast<unsigned long>(value);
  do *--p = static_cast<char>('0' + v % 10); while ((v /= 10) != 0);
  if (negative) *--p = '-';
  put(p);
}

void on_fatal(int signal_number, siginfo_t* info, void*) {
  char name[17] = {};
  ::prctl(PR_GET_NAME, name, 0, 0, 0);
  put("onesided: signal ");
  put_number(signal_number);
  put(" in thread ");
  put_number(static_cast<long>(::gettid()));
  put(" (");
  put(name);
  put("), native frames:\n");
  void* frames[64];
  ::backtrace_symbols_fd(frames, ::backtrace(frames, static_cast<int>(std::size(frames))), STDERR_FILENO);
  // The handler before ours takes over. A fault returns to the faulting
  // instruction, which faults again into it; a signal someone sent (kill,
  // raise: si_code <= 0, as faulthandler's re-raise) is sent again.
  ::sigaction(signal_number, &previous[signal_number], nullptr);
  if (info == nullptr || info->si_code <= 0) ::raise(signal_number);
}

}  // namespace

void report_fatal_signals() {
  static std::once_flag once;
  std::call_once(once, [] {
    void* warm[1];
    ::backtrace(warm, 1);  // loads libgcc_s now, not in the handler
    for (int s : kSignals) ::sigaction(s, nullptr, &previous[s]);
    struct sigaction action = {};
    action.sa_sigaction = on_fatal;
    // SA_ONSTACK: a thread that overflowed its stack runs the handler on its
    // alternate stack where it has one (Python's faulthandler gives the main thread one).
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (int s : kSignals) ::sigaction(s, &action, nullptr);
  });
}

}  // namespace onesided
