// Never loaded: a module whose one job is to need libfabric, so that
// `auditwheel repair` copies libfabric into the wheel (CMakeLists.txt says
// why _core itself does not link it). The reference keeps the dependency
// even under --as-needed.
#include <rdma/fabric.h>

extern "C" __attribute__((visibility("default"))) unsigned onesided_carried_libfabric_version() {
  return fi_version();
}
