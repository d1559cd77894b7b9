// Alloc_mem's blocks and their table; the guarantees are in
// onesided/allocated_memory.hpp, the table's invariants in allocated_blocks.hpp.
#include "memory/allocated_blocks.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "memory/checked.hpp"
#include "onesided/allocated_memory.hpp"
#include "onesided/error.hpp"

namespace onesided {

struct AllocatedMemory::Impl {
  detail::MemoryFile file;  // held open for the block's life: peers open it through /proc/<pid>/fd
  std::byte* map = nullptr;
  std::size_t size = 0, mapped = 0;
  // Under the table's mutex:
  bool freed = false;
  int windows = 0;  // live BlockUses
};

namespace {

struct Table {
  std::mutex mutex;
  std::map<std::uintptr_t, std::weak_ptr<AllocatedMemory>> blocks;  // by base address, unfreed only
};

Table& table() {
  static Table* t = new Table;  // never destroyed: blocks may outlive static destruction
  return *t;
}

}  // namespace

AllocatedMemory::AllocatedMemory(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

std::shared_ptr<AllocatedMemory> AllocatedMemory::allocate(std::size_t size) {
  if (size > detail::kMaxWindowBytes)
    raise(ErrorCategory::Argument, "Alloc_mem: size " + std::to_string(size) +
                                       " bytes exceeds the largest a process can map (" +
                                       std::to_string(detail::kMaxWindowBytes) + ")");
  auto impl = std::make_unique<Impl>();
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  impl->size = size;
  // Zero bytes still get a page, so the block has an address of its own.
  impl->mapped = detail::checked_round_up(size == 0 ? 1 : size, page, "Alloc_mem size");
  impl->file = detail::MemoryFile::make("onesided-alloc-mem", impl->mapped);
  impl->map = impl->file.map(impl->mapped);
  std::shared_ptr<AllocatedMemory> mem(new AllocatedMemory(std::move(impl)));
  Table& t = table();
  std::lock_guard lock(t.mutex);
  t.blocks[reinterpret_cast<std::uintptr_t>(mem->base())] = mem;
  return mem;
}

AllocatedMemory::~AllocatedMemory() {
  {
    Table& t = table();
    std::lock_guard lock(t.mutex);
    if (!impl_->freed) t.blocks.erase(reinterpret_cast<std::uintptr_t>(impl_->map));
  }
  ::munmap(impl_->map, impl_->mapped);
}

std::byte* AllocatedMemory::base() const { return impl_->map; }
std::size_t AllocatedMemory::size() const { return impl_->size; }

bool AllocatedMemory::freed() const {
  std::lock_guard lock(table().mutex);
  return impl_->freed;
}

void AllocatedMemory::free() {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  if (impl_->freed) raise(ErrorCategory::Argument, "Free_mem: mem was freed already");
  if (impl_->windows > 0)
    raise(ErrorCategory::Argument, "Free_mem: mem is still exposed by " + std::to_string(impl_->windows) +
                                       " live window(s); free the window first (MPI: a window's memory "
                                       "stays allocated until the window is freed)");
  impl_->freed = true;
  t.blocks.erase(reinterpret_cast<std::uintptr_t>(impl_->map));
}

}  // namespace onesided

namespace onesided::detail {

struct AllocatedAccess {
  static AllocatedMemory::Impl& of(AllocatedMemory& m) { return *m.impl_; }
};

std::string place_text(std::size_t size, const BlockPlace* place) {
  if (size == 0) return "0";
  if (!place) return "-";
  return std::to_string(place->block_bytes) + " " + std::to_string(place->offset) + " " + std::to_string(size) +
         " " + place->file.text();
}

std::optional<BlockUse> use_allocated(const void* base, std::size_t len) {
  const auto at = reinterpret_cast<std::uintptr_t>(base);
  Table& t = table();
  std::lock_guard lock(t.mutex);
  auto it = t.blocks.upper_bound(at);
  if (it == t.blocks.begin()) return std::nullopt;
  --it;
  std::shared_ptr<AllocatedMemory> mem = it->second.lock();
  if (!mem) return std::nullopt;  // going: its destructor waits for the mutex
  AllocatedMemory::Impl& b = AllocatedAccess::of(*mem);
  const std::uintptr_t start = reinterpret_cast<std::uintptr_t>(b.map);
  if (len == 0 || at - start > b.size || len > b.size - (at - start)) return std::nullopt;
  ++b.windows;
  BlockUse u;
  u.place.file = b.file.address();
  u.place.block_bytes = b.mapped;
  u.place.offset = at - start;
  u.use = std::shared_ptr<void>(mem.get(), [mem](void*) {
    std::lock_guard done(table().mutex);
    --AllocatedAccess::of(*mem).windows;
  });
  return u;
}

}  // namespace onesided::detail
