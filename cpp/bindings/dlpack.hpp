// The DLPack ABI (dlpack.h, versions 0.x and 1.x) as onesided reads it: the
// structs a `__dlpack__` capsule points to, by layout, and the rules of the
// exchange (https://dmlc.github.io/dlpack/latest/python_spec.html):
//   * the capsule is named "dltensor" (0.x) or "dltensor_versioned" (1.x);
//   * the consumer that takes it renames it "used_dltensor[_versioned]" and
//     then owns the managed tensor: it calls its deleter exactly once, when
//     it no longer needs the memory;
//   * a capsule it does not take keeps its name, and the capsule's own
//     destructor (the producer's) releases the tensor.
#pragma once

#include <cstdint>

namespace onesided::python::dlpack {

enum DeviceType : std::int32_t {
  kCPU = 1,
  kCUDAHost = 3,   // pinned host memory: loads and stores from the CPU work
  kROCMHost = 11,  // likewise
};

enum TypeCode : std::uint8_t {
  kInt = 0,
  kUInt = 1,
  kFloat = 2,
  kOpaqueHandle = 3,
  kBfloat = 4,
  kComplex = 5,
  kBool = 6,
};

struct Device {
  std::int32_t device_type;
  std::int32_t device_id;
};

struct DataType {
  std::uint8_t code;
  std::uint8_t bits;
  std::uint16_t lanes;
};

struct Tensor {
  void* data;
  Device device;
  std::int32_t ndim;
  DataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; null: C order
  std::uint64_t byte_offset;
};

struct ManagedTensor {
  Tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(ManagedTensor*);
};

struct Version {
  std::uint32_t major;
  std::uint32_t minor;
};

inline constexpr std::uint64_t kFlagReadOnly = 1u << 0;
inline constexpr std::uint64_t kFlagIsCopied = 1u << 1;

struct ManagedTensorVersioned {
  Version version;
  void* manager_ctx;
  void (*deleter)(ManagedTensorVersioned*);
  std::uint64_t flags;
  Tensor dl_tensor;
};

// The newest major version onesided reads; a 1.x tensor is what it asks for.
inline constexpr std::uint32_t kMajor = 1;

}  // namespace onesided::python::dlpack
