// MappedFile: a read-only view of a whole file. Regular files are mapped with
// mmap (no copy, pages fault in on demand, which is what makes `tileprof size`
// on a 140 MB archive cost only the pages it touches); anything else (pipes,
// character devices, /proc files that report size 0, or a failed mmap) is read
// into memory with read(). Move-only; the bytes stay valid while it lives.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "common/expected.h"

namespace tileprof {

class MappedFile {
 public:
  // Opens and maps (or reads) `path`. The error message is the strerror text
  // alone ("No such file or directory", "Is a directory", ...) because
  // callers such as `size` print it after their own "<path>: " prefix.
  // `whole`: the caller reads every byte, so the pages are mapped in up
  // front (MAP_POPULATE), one call instead of a fault per 16 pages.
  static Expected<MappedFile> Open(const std::string& path, bool whole = false);

  // The errno of this thread's last failed Open (0 after a success), for
  // callers that must branch on the cause (ENOENT, EISDIR).
  static int LastErrorNumber();

  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  uint64_t size() const { return size_; }
  // True when the bytes come from mmap rather than a read() copy.
  bool is_mapped() const { return mapped_; }

 private:
  void Reset();

  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  bool mapped_ = false;
  std::string buffer_;  // the read() fallback's storage
};

}  // namespace tileprof
