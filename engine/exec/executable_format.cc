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
Expected<Header> CheckHeader(std::span<const uint8_t> head, uint64_t file_size,
                             std::string_view source) {
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
    return fail(fmt::format("executable format version {}, this tileprof reads version {}",
                            header.version, kExecutableFormatVersion));
  }
  header.key = LoadLe(head.data() + 16, 8);
  const uint64_t payload_size = LoadLe(head.data() + 24, 8);
  const uint64_t actual = file_size - kExecutableHeaderBytes;
  if (payload_size != actual) {
    return fail(fmt::format("{} executable: the header says {} bytes of payload, the file has {}",
                            actual < payload_size ? "truncated" : "corrupted", payload_size,
                            actual));
  }
  return header;
}

Expected<size_t> HeadBytes(std::span<const uint8_t> payload) {
  size_t end = 0;
  for (int section = 0; section < 3; ++section) {
    if (payload.size() - end < 9)
      return Error("the sections before the graph run past the payload");
    const uint64_t length = LoadLe(payload.data() + end + 1, 8);
    if (length > payload.size() - end - 9)
      return Error("the sections before the graph run past the payload");
    end += 9 + length;
  }
  return end;
}

namespace {

void StoreLe(uint8_t* p, uint64_t value) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>((value >> (8 * i)) & 0xff);
}

Error ChecksumMismatch(std::string_view source, std::string_view which, uint64_t stored,
                       uint64_t computed) {
  return Error(
      fmt::format("{}: corrupted executable: {} mismatch (stored {:#018x}, computed {:#018x})",
                  source, which, stored, computed));
}

}  // namespace

void Seal(std::span<uint8_t> file) {
  if (file.size() < kExecutableHeaderBytes) return;
  const std::span<const uint8_t> payload = file.subspan(kExecutableHeaderBytes);
  StoreLe(file.data() + 24, payload.size());
  const Expected<size_t> head = HeadBytes(payload);
  StoreLe(file.data() + 40, Checksum(file.first(32), payload.first(head ? *head : payload.size())));
  StoreLe(file.data() + 32, Checksum(file.first(32), payload));
}

Status VerifyHead(std::span<const uint8_t> head, std::string_view source) {
  const std::span<const uint8_t> payload = head.subspan(kExecutableHeaderBytes);
  const uint64_t stored = LoadLe(head.data() + 40, 8);
  const uint64_t computed = Checksum(head.first(32), payload);
  if (computed != stored) return ChecksumMismatch(source, "head checksum", stored, computed);
  return {};
}

Expected<Header> ReadHeader(std::span<const uint8_t> bytes, std::string_view source,
                            Verify verify) {
  TILEPROF_ASSIGN_OR_RETURN(Header header, CheckHeader(bytes, bytes.size(), source));
  header.payload = bytes.subspan(kExecutableHeaderBytes);
  if (verify == Verify::kNone) return header;
  if (verify == Verify::kAll) {
    const uint64_t stored = LoadLe(bytes.data() + 32, 8);
    const uint64_t computed = Checksum(bytes.first(32), header.payload);
    if (computed != stored) return ChecksumMismatch(source, "checksum", stored, computed);
  }
  const Expected<size_t> head = HeadBytes(header.payload);
  if (!head)
    return Error(fmt::format("{}: corrupted executable: {}", source, head.error().message()));
  TILEPROF_RETURN_IF_ERROR(VerifyHead(bytes.first(kExecutableHeaderBytes + *head), source));
  return header;
}

}  // namespace tileprof::engine::exec::format
