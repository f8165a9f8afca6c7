// FileProvider: how `size` reaches the file system. The GNU size emulation in
// gnu_size.h and the thin-archive support in ar_reader.h only see files
// through this interface, so they run in-process on bytes in memory (unit
// tests, the fuzz target) exactly as they run on disk.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>

#include "common/expected.h"

namespace tileprof::elf {

// What stat(2) says about a path, as GNU size's get_file_size uses it.
enum class FileKind {
  kRegular,
  kDirectory,
  kOther,    // FIFO, device, socket
  kMissing,  // ENOENT
  kError,    // any other stat failure; FileStatus::error holds strerror
};

struct FileStatus {
  FileKind kind = FileKind::kMissing;
  uint64_t size = 0;
  std::string error;
};

// The bytes of an opened file; valid while the object lives.
class FileContents {
 public:
  virtual ~FileContents() = default;
  virtual std::span<const uint8_t> bytes() const = 0;
};

class FileProvider {
 public:
  virtual ~FileProvider() = default;
  // stat(2) of `path` (following symlinks).
  virtual FileStatus Stat(const std::string& path) = 0;
  // Opens `path` for reading. The Error's message is the strerror text
  // ("No such file or directory"), which GNU prints after "<path>: ".
  virtual Expected<std::unique_ptr<FileContents>> Open(const std::string& path) = 0;
};

// The real file system: stat(2), and mmap through common/mapped_file.h.
class DiskFileProvider final : public FileProvider {
 public:
  FileStatus Stat(const std::string& path) override;
  Expected<std::unique_ptr<FileContents>> Open(const std::string& path) override;
};

// Files held in memory, for tests and fuzzing. Paths not added are missing;
// AddDirectory makes a path a directory.
class MemoryFileProvider final : public FileProvider {
 public:
  void Add(const std::string& path, std::string bytes) { files_[path] = std::move(bytes); }
  void AddDirectory(const std::string& path) { directories_[path] = true; }

  FileStatus Stat(const std::string& path) override;
  Expected<std::unique_ptr<FileContents>> Open(const std::string& path) override;

 private:
  std::map<std::string, std::string> files_;
  std::map<std::string, bool> directories_;
};

}  // namespace tileprof::elf
