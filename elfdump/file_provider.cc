#include "elfdump/file_provider.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "common/mapped_file.h"

namespace tileprof::elf {
namespace {

class MappedContents final : public FileContents {
 public:
  explicit MappedContents(MappedFile file) : file_(std::move(file)) {}
  std::span<const uint8_t> bytes() const override { return file_.bytes(); }

 private:
  MappedFile file_;
};

class StringContents final : public FileContents {
 public:
  explicit StringContents(const std::string& bytes) : bytes_(bytes) {}
  std::span<const uint8_t> bytes() const override {
    return {reinterpret_cast<const uint8_t*>(bytes_.data()), bytes_.size()};
  }

 private:
  const std::string& bytes_;  // owned by the provider
};

}  // namespace

FileStatus DiskFileProvider::Stat(const std::string& path) {
  FileStatus status;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    status.kind = errno == ENOENT ? FileKind::kMissing : FileKind::kError;
    status.error = std::strerror(errno);
    return status;
  }
  status.size = static_cast<uint64_t>(st.st_size);
  status.kind = S_ISDIR(st.st_mode)   ? FileKind::kDirectory
                : S_ISREG(st.st_mode) ? FileKind::kRegular
                                      : FileKind::kOther;
  return status;
}

Expected<std::unique_ptr<FileContents>> DiskFileProvider::Open(const std::string& path) {
  auto file = MappedFile::Open(path);
  if (!file) return file.error();
  return std::unique_ptr<FileContents>(std::make_unique<MappedContents>(std::move(*file)));
}

FileStatus MemoryFileProvider::Stat(const std::string& path) {
  FileStatus status;
  if (directories_.count(path) != 0) {
    status.kind = FileKind::kDirectory;
  } else if (auto it = files_.find(path); it != files_.end()) {
    status.kind = FileKind::kRegular;
    status.size = it->second.size();
  } else {
    status.kind = FileKind::kMissing;
    status.error = std::strerror(ENOENT);
  }
  return status;
}

Expected<std::unique_ptr<FileContents>> MemoryFileProvider::Open(const std::string& path) {
  if (directories_.count(path) != 0) return Error(std::strerror(EISDIR));
  auto it = files_.find(path);
  if (it == files_.end()) return Error(std::strerror(ENOENT));
  return std::unique_ptr<FileContents>(std::make_unique<StringContents>(it->second));
}

}  // namespace tileprof::elf
