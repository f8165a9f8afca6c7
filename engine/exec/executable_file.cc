// Reading executables from files. See executable.h.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "common/file.h"
#include "engine/exec/executable.h"
#include "engine/exec/executable_format.h"

namespace tileprof::engine::exec {
namespace {

using format::CheckHeader;
using format::DeserializePayload;
using format::Header;
using format::LoadLe;

// kReport from a file: only the header and the payload's head (the sections
// before the graph) are read, and checked by the head checksum, so a report
// neither reads nor hashes the bulk of a large executable (192 MB for
// mobilenet_v2: a third of a warm cache hit, and seconds from a cold disk).
// A file truncated meanwhile is a short read, not a SIGBUS.
Expected<Executable> ReadReportStreaming(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return Error(fmt::format("{}: not a regular file", path));
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  // Exactly `length` bytes at `offset`, or nothing (short file).
  const auto read_at = [&](uint64_t offset, uint64_t length) -> std::optional<std::string> {
    std::string out(length, '\0');
    uint64_t done = 0;
    while (done < length) {
      ssize_t n = ::pread(fd, out.data() + done, length - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::nullopt;
      done += static_cast<uint64_t>(n);
    }
    return out;
  };
  const auto as_bytes = [](const std::string& text) {
    return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  };
  const auto whole_file = [&]() -> Expected<Executable> {
    // Odd files: the in-memory path's checks name the problem.
    TILEPROF_ASSIGN_OR_RETURN(std::string whole, ReadFile(path));
    return DeserializeExecutable(as_bytes(whole), path, LoadParts::kReport);
  };
  if (size < kExecutableHeaderBytes) return whole_file();
  // The sections before the graph: info, lowering, report (tag + 8-byte length each).
  uint64_t end = kExecutableHeaderBytes;
  for (int section = 0; section < 3; ++section) {
    if (size - end < 9) return whole_file();
    auto tag_and_length = read_at(end, 9);
    if (!tag_and_length) return whole_file();
    const uint64_t length = LoadLe(reinterpret_cast<const uint8_t*>(tag_and_length->data()) + 1, 8);
    if (length > size - end - 9) return whole_file();
    end += 9 + length;
  }
  auto prefix = read_at(0, end);
  if (!prefix) return whole_file();
  TILEPROF_ASSIGN_OR_RETURN(Header header, CheckHeader(as_bytes(*prefix), size, path));
  TILEPROF_RETURN_IF_ERROR(format::VerifyHead(as_bytes(*prefix), path));
  header.payload = as_bytes(*prefix).subspan(kExecutableHeaderBytes);
  return DeserializePayload(header, path, LoadParts::kReport);
}

}  // namespace

Expected<Executable> ReadExecutableFile(const std::string& path, LoadParts parts) {
  if (parts == LoadParts::kReport) return ReadReportStreaming(path);
  if (parts == LoadParts::kRunnable) {
    // The report part says whether the graph will run; reading the whole
    // file for one out of memory would cost a full load for nothing.
    TILEPROF_ASSIGN_OR_RETURN(Executable report_only, ReadReportStreaming(path));
    if (report_only.result.tiles_out_of_memory > 0) return report_only;
  }
  // Read, not mapped: a file truncated under a mapping would raise SIGBUS.
  TILEPROF_ASSIGN_OR_RETURN(std::string whole, ReadFile(path));
  return DeserializeExecutable({reinterpret_cast<const uint8_t*>(whole.data()), whole.size()}, path,
                               parts);
}

}  // namespace tileprof::engine::exec
