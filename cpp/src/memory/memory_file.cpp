#include "memory/memory_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "onesided/error.hpp"

namespace onesided::detail {
namespace {

[[noreturn]] void fail(const std::string& call) {
  raise(ErrorCategory::Transport, call + ": " + std::strerror(errno));
}

// The identity of the file behind `fd`.
void identify(int fd, std::uint64_t& device, std::uint64_t& inode) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail("fstat");
  device = static_cast<std::uint64_t>(st.st_dev);
  inode = static_cast<std::uint64_t>(st.st_ino);
}

}  // namespace

std::string MemoryFileAddress::text() const {
  return std::to_string(pid) + " " + std::to_string(fd) + " " + std::to_string(device) + " " + std::to_string(inode);
}

MemoryFileAddress MemoryFileAddress::from_text(const std::string& text) {
  MemoryFileAddress a;
  if (std::sscanf(text.c_str(), "%" SCNd64 " %" SCNd32 " %" SCNu64 " %" SCNu64, &a.pid, &a.fd, &a.device,
                  &a.inode) != 4)
    raise(ErrorCategory::Internal, "not the address of shared memory: '" + text + "'");
  return a;
}

MemoryFile MemoryFile::make(const char* label, std::size_t bytes) {
  MemoryFile f;
  f.fd_ = ::memfd_create(label, MFD_CLOEXEC);
  if (f.fd_ < 0) fail("memfd_create");
  if (::ftruncate(f.fd_, static_cast<off_t>(bytes)) != 0) fail("ftruncate");  // f closes it as the error leaves
  identify(f.fd_, f.device_, f.inode_);
  return f;
}

MemoryFile MemoryFile::open(const MemoryFileAddress& at) {
  const std::string path = "/proc/" + std::to_string(at.pid) + "/fd/" + std::to_string(at.fd);
  MemoryFile f;
  f.fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (f.fd_ < 0) fail("open " + path);
  identify(f.fd_, f.device_, f.inode_);
  if (f.device_ != at.device || f.inode_ != at.inode)
    raise(ErrorCategory::Transport, path + " is no longer the shared memory it was (the process closed it)");
  return f;
}

MemoryFile::MemoryFile(MemoryFile&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), device_(o.device_), inode_(o.inode_) {}

MemoryFile& MemoryFile::operator=(MemoryFile&& o) noexcept {
  if (this != &o) {
    close();
    fd_ = std::exchange(o.fd_, -1);
    device_ = o.device_;
    inode_ = o.inode_;
  }
  return *this;
}

MemoryFile::~MemoryFile() { close(); }

void MemoryFile::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::byte* MemoryFile::map(std::size_t bytes) const {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (p == MAP_FAILED) fail("mmap");
  return static_cast<std::byte*>(p);
}

void MemoryFile::resize(std::size_t bytes) const {
  if (::ftruncate(fd_, static_cast<off_t>(bytes)) != 0) fail("ftruncate");
}

MemoryFileAddress MemoryFile::address() const {
  if (fd_ < 0) return {};
  return {static_cast<std::int64_t>(::getpid()), fd_, device_, inode_};
}

}  // namespace onesided::detail
