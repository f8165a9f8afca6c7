// The executable cache directory (../shared/spec/executable-cache.md
// sections 1 to 3): one `<key as %llx>.poplar_exec` per compiled module, no
// index, files deletable at any time, nothing evicted. Beside each executable
// the module's canonical text (`<key>.hlo`) is kept so that `tileprof cache
// explain` can say why a module missed; the executable never depends on it.
//
// Concurrency, as the original's TF-HEAD: `<key>.compile_lock` is held
// exclusively while a process compiles (so concurrent processes compile a
// module once) and `<key>.read_lock` shared while loading, exclusively
// while writing. Writes go to a temporary file renamed over the target, so a
// reader never sees a partial file even without the locks; a cache directory
// that cannot be written (a read-only copy shipped to a machine) still loads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "engine/exec/executable.h"

namespace tileprof::engine::exec {

// What enters the key: the module's canonical fingerprint, the target and
// the canonical text of the options that change the compiled program. The
// executable format and tileprof versions enter too, so that upgrading
// tileprof misses rather than loads what an older compiler made.
struct CacheKeyParts {
  uint64_t fingerprint = 0;
  std::string target;        // TargetKeyText
  std::string options_text;  // the program-changing options, canonical
};
uint64_t ComputeCacheKey(const CacheKeyParts& parts);
// "ipu2 ipus=1 tiles_per_ipu=1472": the target as the key sees it.
std::string TargetKeyText(const Target& target);

// "<key as %llx>.poplar_exec": lower-case hex without zero padding.
std::string ExecutableFileName(uint64_t key);
// Parses a name of that form; nullopt for anything else.
std::optional<uint64_t> KeyFromFileName(std::string_view name);

// An flock on a lock file, released on destruction. Opening fails quietly in
// a directory that cannot be written (held() is then false): only writers
// need to exclude one another, and such a directory has none.
class FileLock {
 public:
  enum class Mode { kShared, kExclusive };
  FileLock(const std::string& path, Mode mode);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

class ExecutableCache {
 public:
  explicit ExecutableCache(std::string directory) : directory_(std::move(directory)) {}

  const std::string& directory() const { return directory_; }
  // "<dir>/<hex>.poplar_exec" and the lock, module-text paths beside it.
  std::string ExecutablePath(uint64_t key) const;
  std::string ModuleTextPath(uint64_t key) const;
  std::string CompileLockPath(uint64_t key) const;
  std::string ReadLockPath(uint64_t key) const;

  // Creates the directory (and parents) if missing.
  Status EnsureDirectory() const;

  enum class LookupKind { kMissing, kLoaded, kCorrupt };
  struct Lookup {
    LookupKind kind = LookupKind::kMissing;
    std::optional<Executable> executable;  // kLoaded
    std::string problem;                   // kCorrupt: names the file and what is wrong
  };
  // Loads `key` under the shared read lock. A file whose key, checksum or
  // contents are wrong is kCorrupt, never an error: the caller recompiles.
  Lookup Load(uint64_t key, LoadParts parts = LoadParts::kAll) const;

  // Writes the executable (temporary file + rename, under the exclusive
  // read lock) and the module text beside it.
  Status Store(uint64_t key, std::string_view executable_bytes, std::string_view module_text) const;

 private:
  std::string directory_;
};

// One file of a cache directory, as `tileprof cache ls` / `verify` see it.
struct CacheEntry {
  std::string path;
  std::string file_name;
  uint64_t key = 0;
  uint64_t size = 0;
  int64_t mtime = 0;                   // seconds since the epoch
  std::optional<ExecutableInfo> info;  // unset when the file is unreadable
  std::string problem;                 // why info is unset, or the verify error
  bool has_module_text = false;
};
// Every `*.poplar_exec` of the directory, sorted by file name, with the
// header read (`verify` = false: header and info section only, no checksum,
// so listing a directory of large executables stays cheap; true: checksum
// and the whole executable rebuilt). Error: the directory cannot be listed.
Expected<std::vector<CacheEntry>> ListCache(const std::string& directory, bool verify);

}  // namespace tileprof::engine::exec
