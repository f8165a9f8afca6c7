// Fuzz target for the .npy reader (common/npy.h), which reads user-supplied
// input files of `tileprof run --input`.
//
// Properties checked besides "no crash, no sanitizer report, no hang":
//  * a rejected input gets a message naming the source;
//  * an accepted array has exactly NumElements x item size bytes of data;
//  * writing it back and reading that again gives the same array, and the
//    written file is a fixed point (Serialize(Parse(Serialize(a))) ==
//    Serialize(a)).
#include <cstdint>
#include <span>
#include <string>

#include "common/npy.h"

namespace {

void Check(bool condition) {
  if (!condition) __builtin_trap();  // a property violation is a finding, like a crash
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tileprof::npy;
  const auto bytes = std::as_bytes(std::span<const uint8_t>(data, size));
  tileprof::Expected<Array> array = Parse(bytes, "fuzz.npy");
  if (!array) {
    Check(array.error().message().rfind("fuzz.npy: ", 0) == 0);
    return 0;
  }
  Check(array->data.size() == array->NumElements() * ItemSize(array->dtype));
  tileprof::Expected<std::string> written = Serialize(*array);
  Check(written.has_value());
  if (!written) return 0;
  tileprof::Expected<Array> again =
      Parse(std::as_bytes(std::span<const char>(written->data(), written->size())), "written.npy");
  Check(again.has_value());
  if (!again) return 0;
  Check(again->dtype == array->dtype && again->shape == array->shape && again->data == array->data);
  tileprof::Expected<std::string> rewritten = Serialize(*again);
  Check(rewritten.has_value() && *rewritten == *written);
  return 0;
}
