// The libfabric onesided runs on: loaded at run time by dlopen, never linked.
//
// Why not linked: a process may hold more than one libfabric (a wheel's
// bundled copy, an MPI wheel's, the site's). Linked by name, onesided's fi_*
// references would bind to whichever libfabric.so.1 entered the global scope
// first, and a later library's DT_NEEDED libfabric.so.1 would be handed
// whichever copy was loaded first. Loaded by path with RTLD_LOCAL and
// RTLD_DEEPBIND and called through this table, onesided uses the library
// chosen here (onesided/runtime.hpp, load_libfabric) whatever else the
// process holds, and that library's own calls into itself (fi_log,
// fi_param_get, fi_freeinfo, ...) stay inside it.
//
// Only these five entry points are real symbols: every other fi_* call is an
// inline wrapper over the ops tables of the objects they return, so it runs
// in the library that made the object.
#pragma once

#include <rdma/fabric.h>

#include <cstdint>
#include <string>

namespace onesided::detail {

struct FabricLibrary {
  std::string path;        // the file mapped, as the dynamic loader resolved it
  std::string chosen_by;   // "ONESIDED_LIBFABRIC", "bundled" or "system"
  std::uint32_t version;   // the library's fi_version()
  int (*getinfo)(std::uint32_t, const char*, const char*, std::uint64_t, const fi_info*, fi_info**);
  void (*freeinfo)(fi_info*);
  fi_info* (*dupinfo)(const fi_info*);  // dupinfo(nullptr) is fi_allocinfo()
  int (*fabric)(fi_fabric_attr*, fid_fabric**, void*);
  const char* (*strerror)(int);
};

// The process's libfabric: the one load_libfabric chose, loaded by the
// first call (of either) if none has been.
const FabricLibrary& fabric_library();

}  // namespace onesided::detail
