#include "transport/fabric_prewarm.hpp"

#include <pthread.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "transport/fabric_library.hpp"

namespace onesided::detail {
namespace {

std::mutex mutex;
std::condition_variable finished;
bool running = false;  // guarded by mutex

void wait_for_it() {
  std::unique_lock lock(mutex);
  finished.wait(lock, [] { return !running; });
}

// Exit waits too: the thread is detached (a forked child has no thread to
// join), so nothing else would.
struct WaitAtExit {
  ~WaitAtExit() { wait_for_it(); }
} wait_at_exit;

}  // namespace

void prewarm_fabric() {
  static std::once_flag once;
  std::call_once(once, [] {
    const FabricLibrary& lib = fabric_library();
    ::pthread_atfork(wait_for_it, nullptr, nullptr);
    {
      std::lock_guard lock(mutex);
      running = true;
    }
    std::thread([&lib] {
      // The provider list only (FI_PROV_ATTR_ONLY): the initialisation,
      // nothing opened.
      fi_info* providers = nullptr;
      if (lib.getinfo(FI_VERSION(1, 9), nullptr, nullptr, FI_PROV_ATTR_ONLY, nullptr, &providers) == 0)
        lib.freeinfo(providers);
      {
        std::lock_guard lock(mutex);
        running = false;
      }
      finished.notify_all();
    }).detach();
  });
}

}  // namespace onesided::detail
