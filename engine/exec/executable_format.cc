// Header checks and checksum of the executable format.
#include "engine/exec/executable_format.h"

#include <fmt/format.h>

#include <cstring>

#include "common/hash.h"

namespace tileprof::engine::exec::format {

uint64_t Checksum(std::span<const uint8_t> header32, std::span<const uint8_t> payload) {
  Hasher hasher;
  hasher.Add(std::string_view(reinterpret_cast<const char*>(header32.data()), header32.size()));
  hasher.Add(std::string_view(reinterpret_cast<const char*>(payload.data()), payload.size()));
  return hasher.Digest();
}

// Magic, version and payload size, from the first bytes of a file of
// `file_size` bytes (`head` may be shorter than the header only when the
// file is).
Expected<Header> CheckHeader(std::span<const uint8_t> head, uint64_t file_size, std::string_view source) {
  const auto fail = [&](std::string what) { return Error(fmt::format("{}: {}", source, what)); };
  if (head.size() < kExecutableMagic.size() ||
      std::memcmp(head.data(), kExecutableMagic.data(), kExecutableMagic.size()) != 0) {
    return fail("not a tileprof executable (bad magic)");
  }
  if (file_size < kExecutableHeaderBytes || head.size() < kExecutableHeaderBytes) {
    return fail(fmt::format("truncated executable: {} bytes, the header alone is {}", file_size,
                            kExecutableHeaderBytes));
  }
  Header header;
  header.version = static_cast<uint32_t>(LoadLe(head.data() + 8, 4));
  if (header.version != kExecutableFormatVersion) {
    return fail(fmt::format("executable format version {}, this tileprof reads version {}", header.version,
                            kExecutableFormatVersion));
  }
  header.key = LoadLe(head.data() + 16, 8);
  const uint64_t payload_size = LoadLe(head.data() + 24, 8);
  const uint64_t actual = file_size - kExecutableHeaderBytes;
  if (payload_size != actual) {
    return fail(fmt::format("{} executable: the header says {} bytes of payload, the file has {}",
                            actual < payload_size ? "truncated" : "corrupted", payload_size, actual));
  }
  return header;
}

Error ChecksumMismatch(std::string_view source, uint64_t stored, uint64_t computed) {
  return Error(fmt::format("{}: corrupted executable: checksum mismatch (stored {:#018x}, computed {:#018x})", source,
                           stored, computed));
}

Expected<Header> ReadHeader(std::span<const uint8_t> bytes, std::string_view source, bool verify_checksum) {
  TILEPROF_ASSIGN_OR_RETURN(Header header, CheckHeader(bytes, bytes.size(), source));
  header.payload = bytes.subspan(kExecutableHeaderBytes);
  if (!verify_checksum) return header;
  const uint64_t stored = LoadLe(bytes.data() + 32, 8);
  const uint64_t computed = Checksum(bytes.first(32), header.payload);
  if (computed != stored) return ChecksumMismatch(source, stored, computed);
  return header;
}

}  // namespace tileprof::engine::exec::format
