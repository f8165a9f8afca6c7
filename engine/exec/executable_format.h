// Internal to engine/exec: the pieces of the executable format that the
// writer (executable_write.cc), the reader (executable.cc) and the streaming
// file reader (executable_file.cc) share. See executable.h for the layout.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "common/expected.h"
#include "engine/exec/executable.h"

namespace tileprof::engine::exec::format {

enum class Section : uint8_t { kInfo = 1, kGraph, kProgram, kLowering, kReport, kEnd };

inline uint64_t LoadLe(const uint8_t* p, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= uint64_t{p[i]} << (8 * i);
  return value;
}

// XXH3-64 of the header's first 32 bytes followed by the payload.
uint64_t Checksum(std::span<const uint8_t> header32, std::span<const uint8_t> payload);

struct Header {
  uint32_t version = 0;
  uint64_t key = 0;
  std::span<const uint8_t> payload;
};

// Magic, version and payload size, from the first bytes of a file of
// `file_size` bytes (`head` may be shorter than the header only when the
// file is). Errors start with `source`.
Expected<Header> CheckHeader(std::span<const uint8_t> head, uint64_t file_size, std::string_view source);
Error ChecksumMismatch(std::string_view source, uint64_t stored, uint64_t computed);
// CheckHeader on a whole file's bytes, then (optionally) the checksum.
Expected<Header> ReadHeader(std::span<const uint8_t> bytes, std::string_view source, bool verify_checksum = true);

// Everything after the header checks. With kReport, header.payload need
// only reach the end of the report section.
Expected<Executable> DeserializePayload(const Header& header, std::string_view source, LoadParts parts);

}  // namespace tileprof::engine::exec::format
