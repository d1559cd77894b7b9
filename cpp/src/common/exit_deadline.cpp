// The exit deadline (onesided/exit_deadline.hpp): a detached thread that
// sleeps, then ends the process. It touches only its own captured values
// (the message), so it is safe while the rest of the process runs its exit
// handlers and static destructors around it.
#include "onesided/exit_deadline.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <thread>

namespace onesided {

namespace {

[[noreturn]] void end_process(int signal_number, int status) {
  if (signal_number > 0) {
    // The default action of the signal ends the process, as if it had never
    // been handled: the exit status names it. Unblocked in this thread so
    // that the kernel can deliver it here whatever the others block.
    struct sigaction action = {};
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    sigaction(signal_number, &action, nullptr);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signal_number);
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
    pthread_kill(pthread_self(), signal_number);
    status = 128 + signal_number;  // only if the signal's default is to go on
  }
  _exit(status);
}

}  // namespace

void arm_exit_deadline(std::chrono::milliseconds after, int signal_number, int status, std::string message) {
  std::thread([after, signal_number, status, message = std::move(message)] {
    std::this_thread::sleep_for(after);
    for (std::size_t done = 0; done < message.size();) {
      const ssize_t n = ::write(STDERR_FILENO, message.data() + done, message.size() - done);
      if (n <= 0) break;  // stderr closed or broken: the exit status still says it
      done += static_cast<std::size_t>(n);
    }
    end_process(signal_number, status);
  }).detach();
}

}  // namespace onesided
