// Fuzzes the tensor-map and instruction-info readers: any bytes either fail
// with a message or read; what reads must write back to text that reads to
// the same structs.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "reports/tensor_map.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace tileprof::report;
  if (auto map = ReadTensorMapJson(text, "fuzz")) {
    auto again = ReadTensorMapJson(WriteTensorMapJson(*map), "again");
    if (!again) std::abort();
    // Names with invalid UTF-8 are written with U+FFFD, so compare the
    // canonical text rather than the structs.
    if (WriteTensorMapJson(*again) != WriteTensorMapJson(*map)) std::abort();
  } else if (map.error().message().empty()) {
    std::abort();
  }
  if (auto info = ReadInstructionInfoJson(text, "fuzz")) {
    auto again = ReadInstructionInfoJson(WriteInstructionInfoJson(*info), "again");
    if (!again || WriteInstructionInfoJson(*again) != WriteInstructionInfoJson(*info)) std::abort();
  } else if (info.error().message().empty()) {
    std::abort();
  }
  return 0;
}
