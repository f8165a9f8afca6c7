#include "common/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace tileprof {
namespace {

thread_local int last_error_number = 0;

Error SystemError(int error_number) {
  last_error_number = error_number;
  return Error(std::strerror(error_number));
}

// Reads everything `fd` delivers; for pipes and files whose st_size lies.
Expected<std::string> ReadAll(int fd) {
  std::string data;
  char chunk[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      return SystemError(errno);
    }
    if (n == 0) return data;
    data.append(chunk, static_cast<size_t>(n));
  }
}

}  // namespace

int MappedFile::LastErrorNumber() { return last_error_number; }

Expected<MappedFile> MappedFile::Open(const std::string& path, bool whole) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return SystemError(errno);
  MappedFile file;
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int saved = errno;
    ::close(fd);
    return SystemError(saved);
  }
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ,
                     MAP_PRIVATE | (whole ? MAP_POPULATE : 0), fd, 0);
    if (p != MAP_FAILED) {
      ::close(fd);
      file.data_ = static_cast<const uint8_t*>(p);
      file.size_ = static_cast<uint64_t>(st.st_size);
      file.mapped_ = true;
      last_error_number = 0;
      return file;
    }
  }
  auto data = ReadAll(fd);
  int saved = errno;
  ::close(fd);
  if (!data) return SystemError(saved);
  file.buffer_ = std::move(*data);
  file.data_ = reinterpret_cast<const uint8_t*>(file.buffer_.data());
  file.size_ = file.buffer_.size();
  last_error_number = 0;
  return file;
}

MappedFile::MappedFile(MappedFile&& other) noexcept { *this = std::move(other); }

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this == &other) return *this;
  Reset();
  mapped_ = other.mapped_;
  size_ = other.size_;
  buffer_ = std::move(other.buffer_);
  // A moved std::string may keep its characters in place (heap) or move them
  // (small-string buffer), so re-point at our own copy when not mapped.
  data_ = mapped_ ? other.data_ : reinterpret_cast<const uint8_t*>(buffer_.data());
  other.data_ = nullptr;
  other.size_ = 0;
  other.mapped_ = false;
  other.buffer_.clear();
  return *this;
}

MappedFile::~MappedFile() { Reset(); }

void MappedFile::Reset() {
  if (mapped_ && data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
  mapped_ = false;
  buffer_.clear();
}

}  // namespace tileprof
