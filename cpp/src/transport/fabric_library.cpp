// Choosing, loading and resolving the process's libfabric (fabric_library.hpp
// says why it is loaded at run time, onesided/runtime.hpp which one).
#include "transport/fabric_library.hpp"
#include "transport/fabric_prewarm.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <mutex>
#include <optional>

#include "onesided/error.hpp"
#include "onesided/runtime.hpp"

namespace onesided::detail {
namespace {

constexpr const char* kVariable = "ONESIDED_LIBFABRIC";
constexpr const char* kSystemName = "libfabric.so.1";

// libfabric versions its symbols, and keeps old versions beside new ones
// whose structs differ. A linker would bind each to the default version of
// the libfabric whose headers onesided compiles against; dlsym would take
// the loaded library's default, which in a newer libfabric may expect a
// newer struct layout. So each is asked for by the version the headers mean.
// Checked against libfabric 1.17's symbol table (Debian 12); newer libfabric
// defaults to newer versions (2.x: FABRIC_1.9), so widening this range
// means checking libfabric.map.in of the headers' release first.
static_assert(FI_MAJOR_VERSION == 1 && FI_MINOR_VERSION >= 9 && FI_MINOR_VERSION <= 17,
              "the symbol versions below are those of libfabric 1.9 to 1.17 headers");
constexpr const char* kInfoVersion = "FABRIC_1.3";    // fi_getinfo, fi_freeinfo, fi_dupinfo
constexpr const char* kFabricVersion = "FABRIC_1.1";  // fi_fabric
constexpr const char* kBaseVersion = "FABRIC_1.0";    // fi_strerror, fi_version

// ASan, TSan and MSan abort a dlopen with RTLD_DEEPBIND (it would let the
// library bypass their interceptors); under them onesided's libfabric is
// loaded without it, and may then bind to another copy's symbols.
bool sanitizer_loaded() {
  for (const char* name : {"__asan_init", "__tsan_init", "__msan_init"})
    if (dlsym(RTLD_DEFAULT, name)) return true;
  return false;
}

struct Choice {
  std::string file;       // what dlopen is given
  std::string chosen_by;  // FabricLibrary::chosen_by
  ErrorCategory failure;  // a choice the user made is an Argument error
};

Choice choose(const std::string& bundled) {
  const char* set = std::getenv(kVariable);
  const std::string value = set ? set : "";
  if (value == "system") return {kSystemName, "system", ErrorCategory::Argument};
  if (value == "bundled") {
    if (bundled.empty())
      raise(ErrorCategory::Argument, std::string(kVariable) +
                                         "=bundled: this build of onesided carries no libfabric (only its "
                                         "wheels do); unset it or name a libfabric.so");
    return {bundled, "bundled", ErrorCategory::Argument};
  }
  if (!value.empty()) return {value, kVariable, ErrorCategory::Argument};
  if (!bundled.empty()) return {bundled, "bundled", ErrorCategory::Internal};
  return {kSystemName, "system", ErrorCategory::Transport};
}

// Where the failure comes from, for its message.
std::string origin(const Choice& c) {
  if (c.failure == ErrorCategory::Argument)
    return std::string(kVariable) + "=" + (c.chosen_by == kVariable ? c.file : c.chosen_by);
  if (c.chosen_by == "bundled") return "the bundled libfabric";
  return "libfabric (install it, or set " + std::string(kVariable) + " to a libfabric.so)";
}

template <typename Fn>
Fn resolve(void* handle, const Choice& c, const char* name, const char* version) {
  void* sym = dlvsym(handle, name, version);
  if (!sym) sym = dlsym(handle, name);  // a libfabric built without symbol versions
  if (!sym) raise(c.failure, origin(c) + ": " + c.file + " has no " + name + ", so it is not a libfabric");
  return reinterpret_cast<Fn>(sym);
}

// Without FI_PROVIDER_PATH, libfabric's first fi_getinfo also dlopens
// provider plugins by bare name (libefa-fi.so, libverbs-fi.so, ...), and
// the dynamic loader hands it any such file already in the process, as
// another libfabric's: an MPI wheel's 2.x plugins registered into the
// bundled 1.17 corrupt its heap. So the bundled copy is initialised now
// (FI_PROV_ATTR_ONLY: the provider list, nothing probed) with the path set
// to its own directory, which holds no plugins; a path the user set is
// theirs to keep. Done while onesided is imported, before its threads.
void initialise_alone(const FabricLibrary& lib) {
  if (std::getenv("FI_PROVIDER_PATH")) return;
  const std::string dir = lib.path.substr(0, lib.path.rfind('/'));
  ::setenv("FI_PROVIDER_PATH", dir.c_str(), 0);
  fi_info* providers = nullptr;
  if (lib.getinfo(FI_VERSION(1, 9), nullptr, nullptr, FI_PROV_ATTR_ONLY, nullptr, &providers) == 0)
    lib.freeinfo(providers);
  ::unsetenv("FI_PROVIDER_PATH");
}

FabricLibrary open_library(const std::string& bundled) {
  const Choice c = choose(bundled);
  int flags = RTLD_NOW | RTLD_LOCAL;
  if (!sanitizer_loaded()) flags |= RTLD_DEEPBIND;
  void* handle = dlopen(c.file.c_str(), flags);
  if (!handle) raise(c.failure, origin(c) + ": cannot load " + c.file + ": " + dlerror());
  // Never dlclosed: providers keep threads and atexit handlers in it.
  FabricLibrary lib;
  lib.chosen_by = c.chosen_by;
  link_map* map = nullptr;
  lib.path = dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name ? map->l_name : c.file;
  // The file itself, as /proc/self/maps names it, not a symlink to it.
  if (char* real = ::realpath(lib.path.c_str(), nullptr)) {
    lib.path = real;
    std::free(real);
  }
  lib.getinfo = resolve<decltype(lib.getinfo)>(handle, c, "fi_getinfo", kInfoVersion);
  lib.freeinfo = resolve<decltype(lib.freeinfo)>(handle, c, "fi_freeinfo", kInfoVersion);
  lib.dupinfo = resolve<decltype(lib.dupinfo)>(handle, c, "fi_dupinfo", kInfoVersion);
  lib.fabric = resolve<decltype(lib.fabric)>(handle, c, "fi_fabric", kFabricVersion);
  lib.strerror = resolve<decltype(lib.strerror)>(handle, c, "fi_strerror", kBaseVersion);
  lib.version = resolve<std::uint32_t (*)()>(handle, c, "fi_version", kBaseVersion)();
  if (lib.version < FI_VERSION(1, 9))
    raise(c.failure, origin(c) + ": " + lib.path + " is libfabric " + std::to_string(FI_MAJOR(lib.version)) +
                         "." + std::to_string(FI_MINOR(lib.version)) + "; onesided needs 1.9 or newer");
  if (lib.chosen_by == "bundled") initialise_alone(lib);
  return lib;
}

std::mutex load_mutex;
std::optional<FabricLibrary> loaded;  // guarded by load_mutex; set once, never changed

const FabricLibrary& load(const std::string& bundled) {
  std::lock_guard lk(load_mutex);
  if (!loaded) loaded = open_library(bundled);  // a failure leaves it unset: the next call retries
  return *loaded;
}

}  // namespace

const FabricLibrary& fabric_library() { return load(""); }

}  // namespace onesided::detail

onesided::Libfabric onesided::load_libfabric(const std::string& bundled) {
  const auto& lib = detail::load(bundled);
  detail::prewarm_fabric();  // the first window then waits for little of libfabric's initialisation
  return {lib.path, lib.chosen_by, FI_MAJOR(lib.version), FI_MINOR(lib.version)};
}
