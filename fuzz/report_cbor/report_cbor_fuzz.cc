// Fuzzes the CBOR report reader: any bytes either fail with an error naming
// the file or read; what reads is written, and the written CBOR must read
// again and be a fixed point (written once more, the same bytes), and must
// survive JSON unchanged, so the two encodings of the schema agree.
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>

#include "reports/cbor_codec.h"
#include "reports/invariants.h"
#include "reports/json_codec.h"

namespace {

std::span<const uint8_t> Bytes(const std::string& bytes) {
  return {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto read = tileprof::report::ReadCborReport({data, size}, "fuzz.cbor");
  if (!read) {
    if (!read.error().message().starts_with("fuzz.cbor:")) std::abort();
    return 0;
  }
  // The checks must cope with whatever was read.
  if (read->compilation) (void)tileprof::report::CheckInvariants(*read->compilation);
  if (read->execution) (void)tileprof::report::CheckInvariants(*read->execution);

  std::string once = tileprof::report::WriteCborReport(*read);
  auto again = tileprof::report::ReadCborReport(Bytes(once), "written.cbor");
  if (!again) std::abort();  // we wrote something we cannot read
  if (tileprof::report::WriteCborReport(*again) != once) std::abort();  // not a fixed point

  auto through_json =
      tileprof::report::ReadJsonReport(tileprof::report::WriteJsonReport(*again), "w.json");
  if (!through_json) std::abort();
  if (tileprof::report::WriteCborReport(*through_json) != once) std::abort();
  return 0;
}
