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

// What a variable of the graph section holds. Only kConstant carries its
// bytes; kValueless and kElided are variables standing for constants whose
// values are unknown (CompileResult::valueless_constants), kElided those a
// run may fill (CompileResult::elided_constants).
enum class VariableKind : uint8_t { kVariable, kConstant, kValueless, kElided };

inline uint64_t LoadLe(const uint8_t* p, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= uint64_t{p[i]} << (8 * i);
  return value;
}

// XXH3-64 of the header's first 32 bytes followed by the payload (or, for
// the head checksum, by the payload's head).
uint64_t Checksum(std::span<const uint8_t> header32, std::span<const uint8_t> payload);

// The payload's head: the info, lowering and report sections, all that a
// report needs. Error if their lengths run past the payload.
Expected<size_t> HeadBytes(std::span<const uint8_t> payload);

// Writes the payload size and both checksums of a whole file into its
// header (the head checksum over as much of the head as there is).
void Seal(std::span<uint8_t> file);

struct Header {
  uint32_t version = 0;
  uint64_t key = 0;
  std::span<const uint8_t> payload;
};

// Magic, version and payload size, from the first bytes of a file of
// `file_size` bytes (`head` may be shorter than the header only when the
// file is). Errors start with `source`.
Expected<Header> CheckHeader(std::span<const uint8_t> head, uint64_t file_size,
                             std::string_view source);
// The head checksum against `head`, the file's bytes up to the end of its
// payload's head.
Status VerifyHead(std::span<const uint8_t> head, std::string_view source);

// Which checksums ReadHeader checks: none, the head's (what a report-only
// load reads), or both.
enum class Verify : uint8_t { kNone, kHead, kAll };
// CheckHeader on a whole file's bytes, then the checksums asked for.
Expected<Header> ReadHeader(std::span<const uint8_t> bytes, std::string_view source,
                            Verify verify = Verify::kAll);

// Everything after the header checks. With kReport, header.payload need
// only reach the end of the report section.
Expected<Executable> DeserializePayload(const Header& header, std::string_view source,
                                        LoadParts parts);

}  // namespace tileprof::engine::exec::format
