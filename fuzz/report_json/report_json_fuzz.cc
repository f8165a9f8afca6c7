// Fuzzes the JSON report reader: any bytes either fail with an error naming
// the file or read; what reads is written, and the written JSON must read
// again and be a fixed point (written once more, the same bytes), and must
// survive CBOR unchanged, so the two encodings of the schema agree.
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>

#include "reports/cbor_codec.h"
#include "reports/invariants.h"
#include "reports/json_codec.h"

namespace {

std::span<const uint8_t> Bytes(const std::string& bytes) {
  return {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto read = tileprof::report::ReadJsonReport(text, "fuzz.json");
  if (!read) {
    if (!read.error().message().starts_with("fuzz.json:")) std::abort();
    return 0;
  }
  // The checks must cope with whatever was read.
  if (read->compilation) (void)tileprof::report::CheckInvariants(*read->compilation);
  if (read->execution) (void)tileprof::report::CheckInvariants(*read->execution);

  std::string once = tileprof::report::WriteJsonReport(*read);
  auto again = tileprof::report::ReadJsonReport(once, "written.json");
  if (!again) std::abort();  // we wrote something we cannot read
  if (tileprof::report::WriteJsonReport(*again) != once) std::abort();  // not a fixed point

  auto through_cbor =
      tileprof::report::ReadCborReport(Bytes(tileprof::report::WriteCborReport(*again)), "w.cbor");
  if (!through_cbor) std::abort();
  if (tileprof::report::WriteJsonReport(*through_cbor) != once) std::abort();
  return 0;
}
