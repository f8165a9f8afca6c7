// The serialised executable (`<key>.poplar_exec`, ../shared/spec/
// executable-cache.md section 4): everything a compile produced, so that a
// later process can report on or run the module without compiling it. Our
// own format, not Poplar's; it carries a format version, the cache key, the
// tool version and the target so that a stale or foreign file is rejected
// with a message rather than misread.
//
// Layout (little-endian):
//   0   8  magic "TPEXE\r\n\x1a" (the \r\n and ^Z catch text-mode mangling)
//   8   4  format version (kExecutableFormatVersion)
//   12  4  reserved, 0
//   16  8  cache key
//   24  8  payload size in bytes (the file is exactly 48 + this long)
//   32  8  checksum: XXH3-64 of bytes [0, 32) followed by the payload
//   40  8  head checksum: XXH3-64 of bytes [0, 32) followed by the
//          payload's head, its first three sections (all a report needs)
//   48     payload: sections (a tag byte, an 8-byte length, the body) of
//          LEB128 integers and length-prefixed strings, in this order: info
//          (module, tool version, target, fingerprint, key options, stream
//          names), lowering and graph statistics, the compilation report
//          (CBOR, the reports/ codec), the graph (variables with their kind,
//          constants' values and tile mapping, codelets by name, compute
//          sets, vertices with their fields' runs, parameters and tile,
//          streams), the
//          program (a DAG of nodes in post-order), then an end tag
//
// Reading is for untrusted input: the checksums are checked first, then every
// count and index is bounds-checked and the graph is rebuilt through the
// public Graph API, which checks every mapping, edge and parameter as the
// compiler's own calls are checked; the program is validated against the
// graph, and limits on its depth and unrolled size keep a crafted file from
// exhausting the stack. Errors name the file, the field and its offset.
// Graph::Validate() (completeness: every element mapped, every field
// connected) is not run, as the compiler does not run it either: it costs a
// third of a load and whoever runs a graph checks it before running.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "engine/compiler/compiler.h"
#include "engine/target/target.h"

namespace tileprof::engine::exec {

inline constexpr std::string_view kExecutableMagic{"TPEXE\r\n\x1a", 8};
// 5: a variable's kind byte tells the valueless constants apart (format::
// VariableKind), which version 4 lost: a cache hit ran them as zeros.
// 6: gather and scatter vertices read a box of the indices (idxBoxLo/Size
// parameters, gather.h); a version-5 file's vertices lack them.
// 7: a vertex field is its runs of equally spaced regions (variable, begin,
// length, count, zigzag stride), as the graph keeps them, not every region:
// smaller files, and a load that neither lists nor re-packs the regions;
// a vertex's name is written once for a series of vertices sharing it.
inline constexpr uint32_t kExecutableFormatVersion = 7;
inline constexpr size_t kExecutableHeaderBytes = 48;
inline constexpr std::string_view kExecutableExtension = ".poplar_exec";

// What identifies an executable, readable without rebuilding the graph
// (`tileprof cache ls`).
struct ExecutableInfo {
  uint32_t format_version = kExecutableFormatVersion;
  uint64_t key = 0;
  std::string tool_version;  // TILEPROF_VERSION of the writer
  std::string module_name;
  uint64_t fingerprint = 0;  // hlo::Fingerprint of the compiled module
  TargetOptions target;      // preset, IPUs, tiles per IPU
  std::string key_text;      // the options part of the key (CacheKeyText)
  // Host streams, in graph order: the parameters (and the seed) the host
  // writes and the results it reads back.
  std::vector<std::string> input_streams;
  std::vector<std::string> output_streams;
};

struct Executable {
  ExecutableInfo info;
  compiler::CompileResult result;
  Target target;
};

// The file bytes. `info.input_streams` / `output_streams` are filled from the
// graph; the other info fields are written as given.
std::string SerializeExecutable(const ExecutableInfo& info, const compiler::CompileResult& result);

// Checks the header and both checksums only. Errors start with `source`.
Status VerifyExecutable(std::span<const uint8_t> bytes, std::string_view source);

// Header, checksums and info section (cheap: the graph is not rebuilt).
// Without `verify_checksum` only the header and info section are read, so a
// listing of large files touches their first pages only; the info section
// is still bounds-checked.
Expected<ExecutableInfo> ReadExecutableInfo(std::span<const uint8_t> bytes, std::string_view source,
                                            bool verify_checksum = true);

// What to rebuild. kReport is what a report needs (the compilation report,
// lowering and graph statistics, tiles out of memory): result.graph is then
// null, result.program empty and graph_stats.by_codelet empty; it skips the
// bulk of the file (the graph), which is what makes a cache hit of
// `tileprof compile` cheap: only the head checksum is checked, so damage to
// the graph alone is found by the load that needs the graph (or by `cache
// verify`), never by a report that does not read it. kAll rebuilds the
// graph and program to run.
// kRunnable is kAll for an executable that fits and kReport for one out of
// memory, which does not run (as Poplar): what `tileprof run` needs.
enum class LoadParts : uint8_t { kAll, kReport, kRunnable };

// The executable, rebuilt and checked. Errors start with `source`.
Expected<Executable> DeserializeExecutable(std::span<const uint8_t> bytes, std::string_view source,
                                           LoadParts parts = LoadParts::kAll);

// The same, read from a file.
Expected<Executable> ReadExecutableFile(const std::string& path, LoadParts parts = LoadParts::kAll);

}  // namespace tileprof::engine::exec
