// Fuzz target for the executable reader (engine/exec/executable.h), which
// reads files from a cache directory anyone may have copied or damaged.
//
// The checksums would reject almost every mutation before the parser sees
// it, so an input that starts with the magic gets its payload size and
// checksums patched to match (format::Seal, as the writer does): the fuzzer then explores the
// sections, the graph rebuild and the program DAG. Inputs without the magic exercise the header
// checks as they are.
//
// Properties checked besides "no crash, no sanitizer report, no hang":
//  * a rejected input gets a message naming the source;
//  * an accepted executable serialises again, and that reads back to the
//    same bytes (nothing the reader accepts is lost or invented);
//  * the report-only load accepts whatever the full load accepts.
#include <cstdint>
#include <cstring>
#include <string>

#include "engine/exec/executable.h"
#include "engine/exec/executable_format.h"

namespace {

using namespace tileprof::engine::exec;

void Check(bool condition) {
  if (!condition) __builtin_trap();  // a property violation is a finding, like a crash
}

std::span<const uint8_t> Bytes(const std::string& text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1 << 20)) return 0;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (bytes.size() >= kExecutableHeaderBytes && bytes.starts_with(kExecutableMagic)) {
    format::Seal({reinterpret_cast<uint8_t*>(bytes.data()), bytes.size()});
  }
  auto info = ReadExecutableInfo(Bytes(bytes), "fuzz.poplar_exec");
  auto report = DeserializeExecutable(Bytes(bytes), "fuzz.poplar_exec", LoadParts::kReport);
  auto loaded = DeserializeExecutable(Bytes(bytes), "fuzz.poplar_exec", LoadParts::kAll);
  if (!loaded) {
    Check(loaded.error().message().rfind("fuzz.poplar_exec: ", 0) == 0);
    return 0;
  }
  Check(info.has_value());
  Check(report.has_value());
  const std::string again = SerializeExecutable(loaded->info, loaded->result);
  auto reloaded = DeserializeExecutable(Bytes(again), "again.poplar_exec");
  Check(reloaded.has_value());
  if (reloaded) Check(SerializeExecutable(reloaded->info, reloaded->result) == again);
  return 0;
}
