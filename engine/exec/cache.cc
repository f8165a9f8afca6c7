#include "engine/exec/cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/file.h"
#include "common/hash.h"
#include "common/mapped_file.h"
#include "version.h"

namespace tileprof::engine::exec {

uint64_t ComputeCacheKey(const CacheKeyParts& parts) {
  Hasher hasher;
  hasher.Add("tileprof executable cache\n");
  hasher.AddU64(kExecutableFormatVersion);
  hasher.Add(TILEPROF_VERSION).Add("\n");
  hasher.AddU64(parts.fingerprint);
  hasher.Add(parts.target).Add("\n");
  hasher.Add(parts.options_text);
  return hasher.Digest();
}

std::string TargetKeyText(const Target& target) {
  return fmt::format("{} ipus={} tiles_per_ipu={}", target.ArchString(), target.NumIpus(),
                     target.TilesPerIpu());
}

std::string ExecutableFileName(uint64_t key) {
  return fmt::format("{:x}{}", key, kExecutableExtension);
}

std::optional<uint64_t> KeyFromFileName(std::string_view name) {
  if (!name.ends_with(kExecutableExtension)) return std::nullopt;
  std::string_view hex = name.substr(0, name.size() - kExecutableExtension.size());
  if (hex.empty() || hex.size() > 16 || (hex.size() > 1 && hex[0] == '0')) return std::nullopt;
  uint64_t key = 0;
  for (char c : hex) {
    int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) return std::nullopt;
    key = key << 4 | static_cast<uint64_t>(digit);
  }
  return key;
}

FileLock::FileLock(const std::string& path, Mode mode) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd_ < 0)
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);  // an existing lock in a read-only dir
  if (fd_ < 0) return;
  int result;
  do {
    result = ::flock(fd_, mode == Mode::kShared ? LOCK_SH : LOCK_EX);
  } while (result != 0 && errno == EINTR);
  if (result != 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

std::string ExecutableCache::ExecutablePath(uint64_t key) const {
  return (std::filesystem::path(directory_) / ExecutableFileName(key)).string();
}
std::string ExecutableCache::ModuleTextPath(uint64_t key) const {
  return (std::filesystem::path(directory_) / fmt::format("{:x}.hlo", key)).string();
}
std::string ExecutableCache::CompileLockPath(uint64_t key) const {
  return (std::filesystem::path(directory_) / fmt::format("{:x}.compile_lock", key)).string();
}
std::string ExecutableCache::ReadLockPath(uint64_t key) const {
  return (std::filesystem::path(directory_) / fmt::format("{:x}.read_lock", key)).string();
}

Status ExecutableCache::EnsureDirectory() const {
  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  if (error) return MakeError("executable cache '{}': {}", directory_, error.message());
  if (!std::filesystem::is_directory(directory_, error))
    return MakeError("executable cache '{}' is not a directory", directory_);
  return {};
}

ExecutableCache::Lookup ExecutableCache::Load(uint64_t key, LoadParts parts) const {
  const std::string path = ExecutablePath(key);
  FileLock lock(ReadLockPath(key), FileLock::Mode::kShared);
  Lookup lookup;
  if (::access(path.c_str(), F_OK) != 0 && errno == ENOENT) return lookup;
  // ReadExecutableFile reads rather than maps: a file truncated under a
  // mapping would raise SIGBUS mid-parse.
  auto executable = ReadExecutableFile(path, parts);
  if (!executable && ::access(path.c_str(), F_OK) != 0 && errno == ENOENT)
    return lookup;  // deleted meanwhile
  if (executable && executable->info.key != key) {
    executable = Error(
        fmt::format("{}: the file holds the executable of key {:x}", path, executable->info.key));
  }
  if (!executable) {
    lookup.kind = LookupKind::kCorrupt;
    lookup.problem = executable.error().message();
    return lookup;
  }
  lookup.kind = LookupKind::kLoaded;
  lookup.executable = std::move(*executable);
  return lookup;
}

Status ExecutableCache::Store(uint64_t key, std::string_view executable_bytes,
                              std::string_view module_text) const {
  {
    FileLock lock(ReadLockPath(key), FileLock::Mode::kExclusive);
    TILEPROF_RETURN_IF_ERROR(WriteFileAtomic(ExecutablePath(key), executable_bytes));
  }
  return WriteFileAtomic(ModuleTextPath(key), module_text);
}

Expected<std::vector<CacheEntry>> ListCache(const std::string& directory, bool verify) {
  std::error_code error;
  std::filesystem::directory_iterator it(directory, error);
  if (error) return MakeError("cannot list '{}': {}", directory, error.message());
  std::vector<CacheEntry> entries;
  for (const auto& dirent : it) {
    const std::string name = dirent.path().filename().string();
    if (!name.ends_with(kExecutableExtension)) continue;
    CacheEntry entry;
    entry.path = dirent.path().string();
    entry.file_name = name;
    struct stat st;
    if (::stat(entry.path.c_str(), &st) == 0) {
      entry.size = static_cast<uint64_t>(st.st_size);
      entry.mtime = st.st_mtime;
    }
    std::optional<uint64_t> key = KeyFromFileName(name);
    entry.key = key.value_or(0);
    if (key) {
      std::error_code exists_error;
      entry.has_module_text = std::filesystem::exists(
          dirent.path().parent_path() / fmt::format("{:x}.hlo", *key), exists_error);
    }
    if (verify) {
      // Read rather than mapped, as Load: see there.
      auto bytes = ReadFile(entry.path);
      auto executable =
          bytes ? DeserializeExecutable(
                      {reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()}, entry.path)
                : Expected<Executable>(bytes.error());
      if (executable)
        entry.info = std::move(executable->info);
      else
        entry.problem = executable.error().message();
    } else if (auto file = MappedFile::Open(entry.path); !file) {
      entry.problem = fmt::format("{}: {}", entry.path, file.error().message());
    } else {
      auto info = ReadExecutableInfo(file->bytes(), entry.path, /*verify_checksum=*/false);
      if (info)
        entry.info = std::move(*info);
      else
        entry.problem = info.error().message();
    }
    if (entry.info && !key) {
      entry.problem = fmt::format("{}: the name is not <key as lower-case hex>{}", entry.path,
                                  kExecutableExtension);
    } else if (entry.info && entry.info->key != *key) {
      entry.problem =
          fmt::format("{}: the file holds the executable of key {:x}, its name says {:x}",
                      entry.path, entry.info->key, *key);
    }
    entries.push_back(std::move(entry));
  }
  std::sort(entries.begin(), entries.end(),
            [](const CacheEntry& a, const CacheEntry& b) { return a.file_name < b.file_name; });
  return entries;
}

}  // namespace tileprof::engine::exec
